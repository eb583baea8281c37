"""The seed paper's experiment: segregation before and after everyone rejected implements
their recourse, with the usual recourse metrics, over several seeded runs.

It lives in `analysis`, not in the engine, because it measures the engine's methods with
`analysis.segregation`: the engine stays the ground floor and never imports this package.

One run (seed s): draw / subsample the dataset with s, train the decision model on it
(logistic regression for the synthetic data, as in the paper), take the rows it rejects as
factuals, run every method, replace each factual that received a valid counterfactual by
it, and compute on the population's normalised features (the sensitive item left out):

* every index of the segregation catalogue (`analysis.segregation.catalogue`: centralization,
  Atkinson, average proximity), the post-recourse population with the original's minority,
  epsilon and K-means neighbourhoods;
* cost (mean L2 of the valid recourses), cost_gap (between groups), ynn (k = 5, neighbours
  from the dataset), invalidation (share of factuals without a valid recourse),
  success_gap, worse_indices (how many of the indices got worse than Origin);
* fit_seconds, cf_per_second and wall_seconds (fitting plus generating every factual's
  counterfactual in the run; wall time on this machine);
* the fair-recourse metrics of `recourse_engine.metrics` (FACTS, Kavouras et al. 2023):
  success_rate (share of factuals with a valid recourse), proportion_difference (the
  success-rate gap between groups), equal_effectiveness and equal_choice (the gaps of
  FACTS' equal effectiveness and equal choice for recourse, phi = 0.5, at most 100 actions
  and 500 factuals per group), validity (share approved), gower_similarity, sparsity
  (changed items) and plausibility (distance to the nearest approved row), over the valid
  recourses.

A method may be named with a variant label after a slash (`fair_rl/group_ee`): the part
before the slash is the method, `params` are looked up by the full label, so one run can
compare variants of one method. `training` (the command's --epochs/--batch) goes to every
method that has such a parameter (cchvae, ibr, cruds: epochs and batch; fair_rl: batch, its
SAC minibatch), unless `params` set it for that label.

Held-out evaluation (issue 29, `analysis.experiment.fair_eval`; `settings.holdout`, 0.25
in the sound preset): the decision model and the methods are fitted on the run's
training rows and scored on the held-out rows' rejected, which are also the population
of the indices; every `fair_rl` label gets its ablation rows (untrained, no-fairness
reward, mean action), and every method the FACTS subgroup audit and the twin rates
(`audits.py`, `twins.py`). `split.csv` lists the held-out rows, `audits.csv` the audited
subgroups, `fair_effects.csv` each fair_rl label against its no-fairness reward.

`results.csv` holds method, metric, mean, sd (sd over runs, ddof = 1) and, for the
indices, the paired differences (`analysis.experiment.paired`); `runs.csv` one row per run × method ×
metric; `factuals.csv` one row per run × method × factual (`analysis.experiment.factuals`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.experiment.defects import ebr_farthest, zero_fill
from analysis.experiment.factuals import column_mean, factual_frame
from analysis.experiment.fair_eval import (
    FAIR_METRICS,
    ablations,
    fair_extras,
    mean_action,
    same_fits,
)
from analysis.experiment.figure import scatter
from analysis.experiment.memo import RunMemo, digest, memoised, params_key
from analysis.experiment.people import PeopleDraws, resampled_indices
from analysis.experiment.settings import ExperimentSettings
from analysis.experiment.space import (
    heldout_split,
    index_features,
    mutable_in_space,
    population_features,
    training_split,
)
from analysis.segregation.catalogue import CATALOGUE, names
from analysis.segregation.settings_indices import indices_under
from recourse_engine import SklearnModel, normalise
from recourse_engine.datasets import Dataset
from recourse_engine.methods import METHODS, MethodError, RecourseMethod
from recourse_engine.metrics import (
    cost_gap,
    equal_choice_of_recourse,
    equal_effectiveness,
    found_mask,
    gower_similarity_mean,
    plausibility,
    sparsity_mean,
    success_rates,
    ynn,
)

__all__ = ["metrics", "population_features", "run_experiment", "run_once", "scatter"]

#: the recourse metrics of a method, in the tables after the segregation indices
RECOURSE_METRICS = (
    "cost",
    "cost_gap",
    "ynn",
    "failure_rate",
    "robustness_invalidation",
    "redundancy",
    "constraint_violation",
    "success_gap",
    "worse_indices",
    "success_rate",
    "proportion_difference",
    "equal_effectiveness",
    "equal_choice",
    "validity",
    "gower_similarity",
    "sparsity",
    "plausibility",
    *FAIR_METRICS,
    "fit_seconds",
    "cf_per_second",
    "wall_seconds",
)


def metrics() -> tuple[str, ...]:
    """Every metric of a run, in the tables' order: the catalogue's indices, then the rest."""
    return (*names(), *RECOURSE_METRICS)


def known_methods() -> list[str]:
    return list(METHODS)


def method_class(label: str) -> type[RecourseMethod]:
    """The class of a method label (`name` or `name/variant`)."""
    base = label.split("/", 1)[0]
    if base in METHODS:
        return METHODS[base]
    raise MethodError(f"unknown method {base!r}; known: {', '.join(known_methods())}")


def make_method(
    label: str,
    seed: int,
    params: dict[str, Any] | None = None,
    training: dict[str, Any] | None = None,
) -> RecourseMethod:
    """A fresh method for a label: `training` values for the parameters it has, then
    `params` (which win)."""
    cls = method_class(label)
    names = {f.name for f in dataclasses.fields(cls) if f.init}
    kw = {k: v for k, v in (training or {}).items() if k in names and v is not None}
    kw.update(params or {})
    bad = sorted(set(kw) - names)
    if bad:
        raise MethodError(f"{label}: unknown parameter {bad[0]!r}")
    return cls(seed=seed, **kw)


def parse_methods(text: str) -> list[str]:
    names = [m.strip() for m in text.split(",")]
    if not names or any(not m for m in names):
        raise MethodError(f"--methods {text!r}: give method names separated by commas")
    for m in names:
        method_class(m)
    if len(set(names)) != len(names):
        raise MethodError(f"--methods {text!r}: a method is named twice")
    return names


def train_decision_model(data: Dataset, seed: int, classifier: str = "project") -> SklearnModel:
    """Logistic regression on the synthetic data, an MLP on real data (the paper's choice;
    `classifier="carla_ann"`: the authors' CARLA ann, one hidden layer of 32, learning rate
    0.002, 99 epochs, batch 1024); a dataset that brings its own model (the fair-recourse
    scenario's, possibly biased on purpose) uses that."""
    own = getattr(data, "decision_model", None)
    if callable(own):
        return own(seed)
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier

    x = normalise(data.schema, data.codes)
    if data.name == "synthetic":
        est: Any = LogisticRegression(max_iter=2000)
    elif classifier == "carla_ann":
        est = MLPClassifier(
            hidden_layer_sizes=(32,),
            learning_rate_init=0.002,
            batch_size=1024,
            max_iter=99,
            random_state=seed,
        )
    else:
        est = MLPClassifier(hidden_layer_sizes=(32, 16), max_iter=300, random_state=seed)
    est.fit(x, data.y)
    return SklearnModel(est, data.schema, name=type(est).__name__)


def run_once(
    data: Dataset,
    methods: Sequence[str],
    seed: int,
    *,
    progress: bool = False,
    params: dict[str, dict[str, Any]] | None = None,
    training: dict[str, Any] | None = None,
    settings: ExperimentSettings | None = None,
    people: bool = False,
    memo: RunMemo | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One run: metric rows (method, metric, value; `before` and `diff` = after − before for
    the indices) and the counterfactuals per method (`outputs["data"]`: the population).
    `outputs["factuals"]`: the per-factual frame of each method; with `people`,
    `outputs["people"]`: each method's (B, k) resampled changes of the k indices. `memo`:
    the decision model, the methods' results and the original's K-Means and ε, shared with
    another setting's run (`analysis.experiment.memo`)."""
    st = settings or ExperimentSettings()
    ref = data.codes
    if st.population == "train":
        data = training_split(data, st.train_share, seed)
    fit_data, split = data, None
    if st.holdout > 0:  # fit on the training part, score the held-out part's rejected
        fit_data, data, split = heldout_split(data, st.holdout, seed)
    dkey = (
        digest(data.codes, data.y, data.group),
        digest(fit_data.codes, fit_data.y, fit_data.group),
        seed,
        st.classifier,
    )
    model = memoised(
        memo, ("model", dkey), lambda: train_decision_model(fit_data, seed, st.classifier)
    )
    rejected = ~np.asarray(model.approves(data.codes), dtype=bool)
    factuals = data.codes[rejected]
    groups = data.group
    ix = st.index_settings()

    def space(codes: np.ndarray) -> np.ndarray:
        return index_features(data, codes, st.index_space, st.scaling, ref)

    origin = indices_under(space(data.codes), groups, ix, seed=seed, memo=memo)
    before = {k: float(v) for k, v in origin.values.items()}
    rows: list[dict[str, Any]] = [
        {"method": "origin", "metric": k, "value": v, "before": v, "diff": 0.0}
        for k, v in before.items()
    ]
    outputs: dict[str, Any] = {
        "model": model,
        "rejected": rejected,
        "data": data,
        "factuals": {},
        "people": {},
        "split": split,
        "audits": {},
    }
    labels = list(methods)
    ablated = ablations(labels, params or {})
    params = {**(params or {}), **{a: q for a, _, _, q in ablated}}
    derived = {a: src for a, src, kind, _ in ablated if kind == "mean_action"}
    same = same_fits(labels, ablated, params)  # e.g. two variants' one no-fairness reward
    done: dict[str, Any] = {}
    labels += [a for a, *_ in ablated]
    fitted: dict[str, RecourseMethod] = {}
    rows_rejected = np.flatnonzero(rejected)  # factuals.csv: rows of the loaded data
    if split is not None:
        rows_rejected = split["test_rows"][rows_rejected]
    if people and st.people_resamples:
        draws = PeopleDraws.draw(len(data), st.people_resamples, seed)
        people_before = resampled_indices(space(data.codes), groups, ix, origin, draws)
    for name in labels:

        def compute(name: str = name) -> tuple[RecourseMethod, Any, pd.DataFrame, dict]:
            if name in derived:  # the source's fitted policy, its mean action only
                method = mean_action(fitted[derived[name]])
            else:
                method = make_method(name, seed, (params or {}).get(name), training)
                method.progress = progress
                method.fit(fit_data, model)
            res = method.get_counterfactuals(factuals)
            per = factual_frame(
                data.schema,
                model,
                factuals,
                res.counterfactuals,
                rows_rejected,
                groups[rejected],
                seed=seed,
                cap=st.factual_cap,
            )
            measured = recourse_metrics(data, model, factuals, res, groups[rejected], seed, per)
            frame = pd.DataFrame()
            if st.fair_audits:
                costs = per["cost_l2"].to_numpy(dtype=float)
                extra, frame = fair_extras(
                    data, model, method, factuals, res.counterfactuals, groups[rejected],
                    costs, seed, st.factual_cap,
                )  # fmt: skip
                measured.update(extra)
            measured["_audit"] = frame
            return method, res, per, measured

        mkey = (
            "method",
            dkey,
            name,
            params_key((params or {}).get(name)),
            params_key(training),
            st.factual_cap,
        )
        if name in same:
            method, res, per, measured = done[same[name]]
        else:
            method, res, per, measured = memoised(memo, mkey, compute)
        done[name] = (method, res, per, measured)
        fitted[name] = method
        measured = dict(measured)
        outputs["audits"][name] = measured.pop("_audit")
        outputs[name] = res
        after = data.codes.copy()
        moved = np.flatnonzero(rejected)[res.valid]
        after[moved] = res.counterfactuals[res.valid]
        failed = np.flatnonzero(rejected)[~res.valid]
        if st.replicate_defects and len(failed) and name.split("/", 1)[0] == "ebr":
            far, ok = ebr_farthest(method, data.codes[failed])  # defect (c)
            after[failed[ok]] = far[ok]
            failed = failed[~ok]
        x_after = space(after)
        if st.replicate_defects:  # defect (b): the rest to the all-zero point
            x_after = zero_fill(x_after, failed, mutable_in_space(data, st.index_space))
        post = indices_under(x_after, groups, ix, origin=origin, seed=seed)
        if people and st.people_resamples:
            after = resampled_indices(x_after, groups, ix, origin, draws)
            outputs["people"][name] = after - people_before
        outputs["factuals"][name] = per
        vals: dict[str, float] = {k: float(v) for k, v in post.values.items()}
        vals.update(measured)
        vals["worse_indices"] = float(
            sum(bool(index.is_worse(vals[k] - before[k])) for k, index in CATALOGUE.items())
        )
        vals["fit_seconds"] = method.fit_seconds
        vals["cf_per_second"] = len(factuals) / res.seconds if res.seconds > 0 else math.nan
        vals["wall_seconds"] = method.fit_seconds + res.seconds
        for k, v in vals.items():
            row = {"method": name, "metric": k, "value": v, "before": math.nan, "diff": math.nan}
            if k in before:
                row.update(before=before[k], diff=v - before[k])
            rows.append(row)
    return rows, outputs


def recourse_metrics(
    data: Dataset,
    model: Any,
    factuals: np.ndarray,
    res: Any,
    g: np.ndarray,
    seed: int,
    per: Any,
) -> dict[str, float]:
    """Cost, cost gap, yNN, failure rate, CARLA's metrics (means of the per-factual frame
    `per`), success gap and the fair-recourse metrics of one method's result."""
    cf = res.counterfactuals
    costs = per["cost_l2"].to_numpy(dtype=float)
    vals = {
        "cost": float(np.nanmean(costs)) if res.valid.any() else math.nan,
        "cost_gap": cost_gap(costs, g)[1],
        "ynn": ynn(data.schema, cf, data.as_pool(), model, k=5),
        "failure_rate": invalidation(cf, model),
        "robustness_invalidation": column_mean(per, "robustness_invalidation"),
        "redundancy": column_mean(per, "redundancy"),
        "constraint_violation": column_mean(per, "constraint_violation"),
        "success_gap": success_rates(res.valid, g)[1],
    }
    vals.update(fairness_metrics(data, model, factuals, res, g, seed))
    return vals


def fairness_metrics(
    data: Dataset, model: Any, factuals: np.ndarray, res: Any, groups: np.ndarray, seed: int
) -> dict[str, float]:
    """The fair-recourse metrics of one method's result (see the module docstring)."""
    s, cf = data.schema, res.counterfactuals
    approved = data.codes[np.asarray(model.approves(data.codes), dtype=bool)]
    return {
        "success_rate": float(np.mean(res.valid)) if len(res.valid) else math.nan,
        "proportion_difference": success_rates(res.valid, groups)[1],
        "equal_effectiveness": equal_effectiveness(s, model, factuals, cf, groups, seed=seed)[1],
        "equal_choice": equal_choice_of_recourse(s, model, factuals, cf, groups, seed=seed)[1],
        "validity": 1.0 - invalidation(cf, model),
        "gower_similarity": gower_similarity_mean(s, factuals, cf),
        "sparsity": sparsity_mean(factuals, cf),
        "plausibility": plausibility(s, cf, approved),
    }


def invalidation(counterfactuals: np.ndarray, model: Any) -> float:
    """Share of factuals without a counterfactual the model approves (none found counts):
    `metrics.failure_rate` in one model call, for a model that ignores the factual."""
    found = found_mask(counterfactuals)
    ok = np.zeros(len(counterfactuals), dtype=bool)
    if found.any():
        ok[found] = np.asarray(model.approves(counterfactuals[found]), dtype=bool)
    return float(1.0 - ok.mean()) if len(ok) else math.nan


def summarise(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """method, metric, mean, sd over runs, methods and metrics in their given order."""
    frame = pd.DataFrame(rows)
    order_m = list(dict.fromkeys(frame["method"]))
    grouped = frame.groupby(["method", "metric"], sort=False)["value"]
    out = grouped.agg(
        mean="mean", sd=lambda v: float(np.std(v, ddof=1)) if len(v) > 1 else math.nan
    )
    out = out.reset_index()
    out["method"] = pd.Categorical(out["method"], order_m, ordered=True)
    out["metric"] = pd.Categorical(out["metric"], list(metrics()), ordered=True)
    return (
        out.sort_values(["method", "metric"])
        .reset_index(drop=True)
        .astype({"method": str, "metric": str})
    )


def table(summary: pd.DataFrame) -> str:
    """The paper's table: a row per metric, a column per method, mean ± sd."""
    methods = list(dict.fromkeys(summary["method"]))
    lines = ["| metric | " + " | ".join(methods) + " |", "|---" * (len(methods) + 1) + "|"]
    for metric in metrics():
        cells = []
        for m in methods:
            row = summary[(summary["method"] == m) & (summary["metric"] == metric)]
            if row.empty:
                cells.append("–")
                continue
            mean, sd = float(row["mean"].iloc[0]), float(row["sd"].iloc[0])
            cells.append(f"{mean:.4f}" + ("" if math.isnan(sd) else f" ± {sd:.4f}"))
        if any(c != "–" for c in cells):
            lines.append(f"| {metric} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def run_experiment(
    dataset: str, methods: Sequence[str], runs: int, out_dir: Path, **options: Any
) -> pd.DataFrame:
    """All runs, each run × method a cell of a grid (in this process, on a LocalCluster or
    a Dask cluster: `analysis.experiment.cells.run_experiment`, which takes the options),
    and the files written into out_dir (created; its parent exists)."""
    from analysis.experiment.cells import run_experiment as run_grid

    return run_grid(
        dataset, methods, runs, out_dir, run_once=run_once, summarise=summarise, table=table,
        **options,
    )  # fmt: skip
