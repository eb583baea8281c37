"""What the experiment adds to judge fair recourse where it matters: the held-out split,
the ablation rows of every `fair_rl` method, the subgroup audit and twin rates per method,
and each `fair_rl` variant's paired effect against its no-fairness reward.

* Held-out split (`analysis.experiment.space.heldout_split`): a seeded share `holdout` of
  the rows is set aside; the decision model and every method are fitted on the rest, and
  the rejected people of the held-out rows are the factuals, so a method is never scored
  on people it was fitted on (fair_rl's policy trains on its training rejected). The
  held-out rows are also the population whose segregation indices are compared. The split
  (seed, sizes, a SHA-256 of the held-out row numbers) goes into settings.json, the rows
  into split.csv.
* Ablations (`ablations`): for a `fair_rl` label L, `L/untrained` (the initial actor, the
  same rollouts), `L/no_fairness` (reward `none`, everything else equal; left out when L's
  reward is already `none`) and `L/mean_action` (L's fitted policy, its mean action only:
  `rollouts=1`, no refit).
* `effects`: per `fair_rl` label and per fairness metric, the paired difference L − L's
  no-fairness ablation over runs with the interval of `analysis.experiment.paired`, and
  the t-test's p-value Holm-adjusted across the table's rows (`paired.holm`).
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pandas as pd

from analysis.experiment.audits import AUDIT_METRICS, aggregate, audit
from analysis.experiment.paired import holm, interval, t_pvalue
from analysis.experiment.twins import TWIN_METRICS, twin_measures
from recourse_engine.datasets import Dataset

FAIR_METRICS = (*AUDIT_METRICS, *TWIN_METRICS)
#: the metrics whose effect is estimated against the no-fairness reward (lower is fairer)
EFFECT_METRICS = (
    "success_rate", "proportion_difference", "equal_effectiveness", "equal_choice", "cost",
    "cost_gap", *FAIR_METRICS,
)  # fmt: skip
ABLATIONS = ("untrained", "no_fairness", "mean_action")


def ablation_label(label: str, kind: str) -> str:
    base, _, variant = label.partition("/")
    return f"{base}/{variant}-{kind}" if variant else f"{base}/{kind}"


def ablations(
    methods: list[str], params: dict[str, dict[str, Any]]
) -> list[tuple[str, str, str, dict[str, Any]]]:
    """(ablation label, source label, kind, its params) for every fair_rl label."""
    out = []
    for label in methods:
        if label.split("/", 1)[0] != "fair_rl":
            continue
        p = dict(params.get(label) or {})
        for kind in ABLATIONS:
            if kind == "no_fairness" and p.get("reward") == "none":
                continue
            q = dict(p)
            if kind == "untrained":
                q["untrained"] = True
            elif kind == "no_fairness":
                q["reward"] = "none"
            out.append((ablation_label(label, kind), label, kind, q))
    return out


def same_fits(
    labels: list[str], ablated: list[tuple[str, str, str, dict[str, Any]]], params: dict
) -> dict[str, str]:
    """Ablation label -> an earlier label with the very same parameters (the no-fairness
    ablations of two reward variants are one fit: computed once, reported under both)."""
    seen: dict[str, str] = {}
    out: dict[str, str] = {}
    kinds = {a: kind for a, _, kind, _ in ablated}
    for label in labels:
        if kinds.get(label) == "mean_action":
            continue
        key = repr(sorted((params.get(label) or {}).items()))
        if label in kinds and key in seen:
            out[label] = seen[key]
        seen.setdefault(key, label)
    return out


def mean_action(fitted: Any) -> Any:
    """The fitted policy with its mean action only (one rollout), no refit."""
    one = copy.copy(fitted)
    one.rollouts = 1
    return one


def fair_extras(
    data: Dataset,
    model: Any,
    method: Any,
    factuals: np.ndarray,
    counterfactuals: np.ndarray,
    groups: np.ndarray,
    costs: np.ndarray,
    seed: int,
    cap: int,
) -> tuple[dict[str, float], pd.DataFrame]:
    """The subgroup audit's aggregates and the twin rates, and the audit's rows."""
    frame = audit(
        data.schema, model, factuals, counterfactuals, groups, costs,
        protected=data.sensitive, seed=seed,
    )  # fmt: skip
    vals = aggregate(frame)
    vals.update(
        twin_measures(
            data.schema, model, method, factuals, counterfactuals, data.sensitive, cap=cap
        )
    )
    return vals, frame


def effects(
    runs: pd.DataFrame, methods: list[str], params: dict[str, dict[str, Any]]
) -> pd.DataFrame:
    """Per fair_rl label × metric: the paired difference label − its no-fairness ablation
    over runs, mean and 95% interval (`paired.interval`)."""
    rows = []
    for label, source, kind, _ in ablations(methods, params):
        if kind != "no_fairness":
            continue
        for metric in EFFECT_METRICS:
            a = runs[(runs["method"] == source) & (runs["metric"] == metric)]
            b = runs[(runs["method"] == label) & (runs["metric"] == metric)]
            both = a.merge(b, on="run", suffixes=("", "_ref"))
            d = (both["value"] - both["value_ref"]).to_numpy(dtype=float)
            d = d[np.isfinite(d)]
            if not len(d):
                continue
            lo, hi, how = interval(d)
            rows.append(
                {"method": source, "reference": label, "metric": metric, "diff_mean": float(d.mean()),
                 "diff_lo": lo, "diff_hi": hi, "runs": len(d), "interval": how,
                 "p": t_pvalue(d)}
            )  # fmt: skip
    out = pd.DataFrame(rows)
    if len(out):  # Holm across the table's intervals (`paired.holm`)
        out["p_holm"] = holm(out["p"].to_numpy(dtype=float))
    return out


def effects_table(frame: pd.DataFrame) -> str:
    if frame.empty:
        return ""
    lines = [
        "| method | metric | Δ vs no-fairness reward | 95% interval | p (Holm) | runs |",
        "|---|---|---|---|---|---|",
    ]
    for r in frame.itertuples():
        lines.append(
            f"| {r.method} | {r.metric} | {r.diff_mean:+.4f} | "
            f"[{r.diff_lo:+.4f}, {r.diff_hi:+.4f}] | {r.p_holm:.3g} | {r.runs} ({r.interval}) |"
        )
    note = (
        f"\nIntervals unadjusted (95%); p (Holm): the t-test's p-value Holm-adjusted across "
        f"the {len(frame)} rows of this table.\n"
    )
    return "\n".join(lines) + "\n" + note
