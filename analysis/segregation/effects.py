"""Segregation effects of the recourses shown in a study: full and partial compliance.

Population: every participant with a complete profile in the export, on the
schema's normalised scale, grouped by a screening answer (e.g. gender).

* Full compliance (the seed paper's assumption): for each strategy, every
  participant who was shown a recourse of that strategy implements it; the others
  keep their profile. Where a participant saw several recourses of one strategy
  (e.g. random:3), the one displayed first is taken — display order is
  randomised, so this is a random pick, and it is reproducible.
  Indices after recourse reuse the original population's ε and KMeans
  neighbourhoods. Uncertainty: a participant bootstrap (resampling participants
  with replacement, ε and neighbourhoods held fixed) gives a 95% percentile
  interval of each after − before difference. The bootstrap mean is reported
  beside it: indices computed on few people per neighbourhood (Atkinson) are
  biased in resamples, and a percentile interval then need not cover the estimate.
* Partial compliance: each participant implements the recourse with probability
  p = (action − 1)/6 from their own action rating (1 → never, 7 → surely), or from
  the fitted GAMM's predicted action rating mapped the same way (clipped to
  [0, 1]); a recourse with an item the participant marked impossible is never
  implemented. A Monte-Carlo draw of who implements gives each index's
  distribution. Compliance curves: everyone shown a recourse implements it with
  one probability π — the same people as full compliance, so π = 1 *is* the
  table's "after" and π = 0 the "before" (people who marked an item impossible
  are in the curve as they are in the table; only the rating-implied draw leaves
  them out). A draw where nobody's choice is random is computed once.
* Verdict per index: "worse" or "better" only when the bootstrap 95% interval of
  the change lies entirely on that side of zero *and* its bootstrap p-value, Holm-adjusted
  across every arm × index of the same table (a grouping: strategies, methods or
  origins), is below 0.05; else "no clear change" — a point estimate alone does not
  decide a method comparison, nor one interval among a dozen. `verdict_95` keeps the
  unadjusted interval rule. The resampled indices come from the resamples'
  multiplicities (`analysis.segregation.resampled`), so the 2,000 resamples a Holm
  verdict needs cost about what 200 fresh computations did.
* Arms: effects are reported per `strategy`, and per recourse `method` and
  `origin` when the export has those columns (a method can serve several
  strategies, and pool and generated recourses differ in kind).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from analysis.significance import (
    ALPHA,
    BOOTSTRAP,
    bootstrap_pvalue,
    holm,
    smallest_resamples,
)
from recourse_engine import FeatureSchema, normalise

from .catalogue import CATALOGUE, VERDICTS, names, resampled_values
from .frames import EffectsResult
from .indices import IndexResult, segregation_indices, split_groups
from .resampled import Resamples, multiplicities

CURVE_PI = (0.0, 0.25, 0.5, 0.75, 1.0)
GROUPINGS = ("strategy", "method", "origin")  # evaluation columns that define arms


class EffectsError(ValueError):
    """An export or option the effects cannot be computed from; says what and where."""


@dataclass
class StudyPopulation:
    participants: np.ndarray  # ids
    groups: np.ndarray  # group value of each participant
    X0: np.ndarray  # normalised original profiles (n, p)
    strategies: list[str]  # the arms: values of the `by` column
    cf: dict[str, np.ndarray] = field(default_factory=dict)  # normalised recourse (n, p)
    shown: dict[str, np.ndarray] = field(default_factory=dict)  # had a recourse of s
    impossible: dict[str, np.ndarray] = field(default_factory=dict)
    action: dict[str, np.ndarray] = field(default_factory=dict)  # rating (nan if none)
    chosen: dict[str, pd.DataFrame] = field(default_factory=dict)  # the evaluation rows used
    excluded: dict[str, int] = field(default_factory=dict)
    by: str = "strategy"
    rows_without_value: int = 0  # evaluations of these participants with an empty `by`


def rating_probability(action: np.ndarray, impossible: np.ndarray) -> np.ndarray:
    """(action − 1)/6, and 0 where an item was marked impossible or nothing was shown."""
    a = np.asarray(action, dtype=float)
    p = np.where(np.isfinite(a), (a - 1.0) / 6.0, 0.0)
    return np.where(np.asarray(impossible, dtype=bool), 0.0, np.clip(p, 0.0, 1.0))


def fit_action_gamm(evaluations: pd.DataFrame) -> Any:
    """The GAMM action ~ s(proximity) + participant effects, on evaluations without
    impossible items."""
    from analysis.gamm import fit_gamm  # imported here: optional, heavy

    kept = evaluations.loc[evaluations["any_impossible"] == 0]
    if kept["participant"].nunique() < 2:
        raise EffectsError("the GAMM needs evaluations from at least 2 participants")
    return fit_gamm(kept, outcome="action", distance="proximity", participant="participant")


def gamm_probability(
    pop: StudyPopulation, evaluations: pd.DataFrame, fit: Any = None
) -> dict[str, np.ndarray]:
    """p from the GAMM's predicted action rating for each chosen recourse (`fit`:
    one from `fit_action_gamm`, fitted here when not given)."""
    if fit is None:
        fit = fit_action_gamm(evaluations)
    out = {}
    for s in pop.strategies:
        rows = pop.chosen[s]
        pred = np.full(len(pop.participants), np.nan)
        if len(rows):
            pos = np.searchsorted(pop.participants, rows["participant"].to_numpy())
            pred[pos] = fit.predict(rows)
        out[s] = rating_probability(pred, pop.impossible[s])
    return out


def _schema_codes(
    frame: pd.DataFrame, prefix: str, schema: FeatureSchema, where: str
) -> np.ndarray:
    cols = [prefix + k for k in schema.keys]
    missing = [c for c in cols if c not in frame.columns]
    if missing:
        raise EffectsError(f"{where}: missing profile column(s) {', '.join(missing)}")
    codes = frame[cols].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
    for j, it in enumerate(schema.items):
        bad = ~it.valid(codes[:, j])
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            row = int(frame.index[r]) + 1  # the file's data row (frames keep the file's index)
            raise EffectsError(
                f"{where}: row {row}, column {cols[j]!r}: {frame[cols[j]].iloc[r]!r} is not a "
                f"code of item {it.key!r} ({it.min_value:g}..{it.max_value:g})"
            )
    return codes


def study_population(
    evaluations: pd.DataFrame,
    participants: pd.DataFrame,
    schema: FeatureSchema,
    group: str,
    keep_groups: list[str] | None = None,
    by: str = "strategy",
) -> StudyPopulation:
    """Participants with a complete profile, their group, and their recourse per value
    of the evaluation column `by` (strategy, method or origin)."""
    if group not in participants.columns:
        raise EffectsError(
            f"participants.csv: no column {group!r}; columns are {', '.join(participants.columns)}"
        )
    pa = participants.reset_index(drop=True)
    xcols = [f"x_{k}" for k in schema.keys]
    missing = [c for c in xcols if c not in pa.columns]
    if missing:
        raise EffectsError(f"participants.csv: missing profile column(s) {', '.join(missing)}")
    complete = pa[xcols].notna().all(axis=1).to_numpy()
    excluded = {"no_profile": int((~complete).sum())}
    pa = pa.loc[complete]
    gap = pa[group].isna().to_numpy()
    if gap.any():
        row = int(pa.index[np.flatnonzero(gap)[0]]) + 1
        raise EffectsError(f"participants.csv: row {row}, column {group!r}: empty")
    if keep_groups is not None:
        keep = pa[group].astype(str).isin(keep_groups).to_numpy()
        excluded["other_groups"] = int((~keep).sum())
        pa = pa.loc[keep]
    values = sorted(pa[group].astype(str).unique())
    if len(values) != 2:
        raise EffectsError(
            f"column {group!r} has {len(values)} values among participants with a profile "
            f"({', '.join(values)}); name two with --groups"
        )
    pa = pa.assign(participant=pa["participant"].astype(str))
    dup = pa["participant"].duplicated().to_numpy()
    if dup.any():
        row = int(pa.index[np.flatnonzero(dup)[0]]) + 1
        raise EffectsError(f"participants.csv: row {row}, column 'participant': duplicate id")
    pa = pa.sort_values("participant", kind="stable")
    ids = pa["participant"].astype(str).to_numpy()
    codes = _schema_codes(pa, "x_", schema, "participants.csv")
    X0 = normalise(schema, codes)
    evaluations = evaluations.reset_index(drop=True)
    ev = evaluations.loc[evaluations["participant"].astype(str).isin(ids)].copy()
    order = ["participant", "position"] if "position" in ev.columns else ["participant"]
    ev = ev.sort_values(order, kind="stable")
    if by not in ev.columns:
        raise EffectsError(f"evaluations.csv: no column {by!r}")
    value = ev[by].astype("string").str.strip()
    empty = (value.isna() | (value == "")).to_numpy()
    ev = ev.loc[~empty].assign(**{by: value[~empty].astype(str)})
    strategies = sorted(ev[by].unique())
    if not strategies:
        raise EffectsError(
            f"evaluations.csv: no evaluations with a {by!r} of the participants in the analysis"
        )
    pop = StudyPopulation(
        ids,
        pa[group].to_numpy(),
        X0,
        strategies,
        excluded=excluded,
        by=by,
        rows_without_value=int(empty.sum()),
    )
    for s in strategies:
        rows = ev.loc[ev[by] == s].drop_duplicates("participant")
        pos = np.searchsorted(ids, rows["participant"].astype(str).to_numpy())
        cf = X0.copy()
        cf[pos] = normalise(schema, _schema_codes(rows, "cf_", schema, "evaluations.csv"))
        shown = np.zeros(len(ids), bool)
        shown[pos] = True
        imp = np.zeros(len(ids), bool)
        imp[pos] = rows["any_impossible"].to_numpy(dtype=int) == 1
        act = np.full(len(ids), np.nan)
        act[pos] = rows["action"].to_numpy(dtype=float)
        pop.cf[s], pop.shown[s], pop.impossible[s], pop.action[s] = cf, shown, imp, act
        pop.chosen[s] = rows.assign(participant=rows["participant"].astype(str))
    return pop


def _values(r: IndexResult) -> dict[str, float]:
    return {k: float(v) for k, v in r.values.items()}


def groupings_present(evaluations: pd.DataFrame) -> list[str]:
    """The columns of GROUPINGS the export has with at least one value."""
    out = []
    for col in GROUPINGS:
        if col in evaluations.columns:
            v = evaluations[col].astype("string").str.strip()
            if (v.notna() & (v != "")).any():
                out.append(col)
    return out


def _worse(diff: dict[str, float]) -> list[str]:
    """Indices whose point estimate moved the segregated way (not a verdict)."""
    return [k for k, ix in CATALOGUE.items() if ix.is_worse(diff[k])]


def verdict(index: str, ci: list[float] | None) -> str:
    """The verdict on one index: worse or better when the 95% interval of the change
    excludes zero on that side, else "no clear change" (also with no interval)."""
    if ci is None:
        return "no clear change"
    return CATALOGUE[index].verdict(*ci)


@dataclass
class _Bootstrap:
    """The participant bootstrap's usable resamples (at least two minority and one majority
    member drawn), each catalogue index computed on all of them at once from the
    resamples' multiplicities (`analysis.segregation.resampled`: exactly the index of
    `X[rows]` with the original's ε and neighbourhoods)."""

    rows: np.ndarray  # (usable, n) drawn participants
    counts: np.ndarray  # (usable, n) their multiplicities
    is_min: np.ndarray
    eps: float
    kmeans: Any

    @classmethod
    def draw(cls, drawn: np.ndarray, is_min: np.ndarray, eps: float, kmeans: Any) -> _Bootstrap:
        counts = multiplicities(drawn, len(is_min))
        ok = (counts[:, is_min].sum(1) >= 2) & (counts[:, ~is_min].sum(1) >= 1)
        return cls(drawn[ok], counts[ok], is_min, eps, kmeans)

    @property
    def usable(self) -> int:
        return len(self.rows)

    def indices(self, X: np.ndarray) -> np.ndarray:
        """(usable, k): the catalogue's indices of every usable resample of X."""
        if not self.usable:
            return np.empty((0, len(CATALOGUE)))
        rs = Resamples(
            np.asarray(X, dtype=np.float64), self.is_min, self.rows, self.counts, self.eps,
            self.kmeans,
        )  # fmt: skip
        return resampled_values(rs)


def _holm_verdicts(table: dict[str, Any]) -> int:
    """Holm across one table (every arm × index of a grouping): each difference gets
    `p_holm` and its `verdict` (the 95% interval's, kept only where p_holm < ALPHA); each
    arm its lists of indices by verdict. Returns the family's size."""
    cells = [(arm, i) for arm in table.values() for i in names()]
    adjusted = holm(np.array([arm["difference"][i]["p"] for arm, i in cells], dtype=float))
    for (arm, i), q in zip(cells, adjusted, strict=True):
        d = arm["difference"][i]
        d["p_holm"] = None if math.isnan(q) else float(q)
        d["verdict"] = d["verdict_95"] if q < ALPHA else "no clear change"
    for arm in table.values():
        by_verdict = {
            v: [i for i in names() if arm["difference"][i]["verdict"] == v] for v in VERDICTS
        }
        arm.update(
            worse=by_verdict["worse"],
            better=by_verdict["better"],
            no_clear_change=by_verdict["no clear change"],
            n_worse=len(by_verdict["worse"]),
            n_better=len(by_verdict["better"]),
        )  # fmt: skip
    return int(np.sum(~np.isnan(adjusted)))


def multiplicity(families: dict[str, int], resamples: int) -> dict[str, Any]:
    """effects.json's record of the control: Holm per grouping's table, each family's size,
    and the resamples a family needs before any verdict can pass (`needed`)."""
    return {
        "method": "holm",
        "alpha": ALPHA,
        "families": families,
        "needed": {k: smallest_resamples(m) for k, m in families.items()},
        "too_few_resamples": sorted(k for k, m in families.items() if resamples < smallest_resamples(m)),
    }  # fmt: skip


def compute_effects(
    pop: StudyPopulation,
    *,
    minority: Any = None,
    eps_quantile: float = 0.2,
    clusters: int = 30,
    bootstrap: int = BOOTSTRAP,
    draws: int = 200,
    curve_draws: int = 50,
    probability: dict[str, np.ndarray] | None = None,
    probability_source: str = "rating",
    seed: int = 0,
    progress: Callable[[str, int, int], None] | None = None,
    by: Mapping[str, StudyPopulation] | None = None,
    by_probability: Mapping[str, dict[str, np.ndarray]] | None = None,
) -> EffectsResult:
    """Indices before/after each strategy, bootstrap intervals, partial compliance (a dict,
    as written to effects.json, with ``to_frame()`` and ``curves()``).

    `by` adds arms of other groupings (column name → its population, e.g. from
    `study_population(..., by="method")`) under `out["by"][column]`, computed after
    the strategies with the same participants, ε, neighbourhoods and bootstrap draws.
    """
    is_min, label = split_groups(pop.groups, minority)
    g = pop.groups
    n = len(g)
    before = segregation_indices(
        pop.X0, g, minority=label, eps_quantile=eps_quantile, clusters=clusters, seed=seed
    )
    fixed = {"eps": before.eps, "kmeans": before.kmeans, "minority": label, "n_jobs": 1}

    def idx(X: np.ndarray) -> dict[str, float]:
        return _values(segregation_indices(X, g, **fixed))

    rng = np.random.default_rng(seed)
    drawn = np.array([rng.integers(0, n, size=n) for _ in range(bootstrap)], dtype=np.int64)
    boot = _Bootstrap.draw(drawn.reshape(bootstrap, n), is_min, before.eps, before.kmeans)
    before_boot = boot.indices(pop.X0)

    out: dict[str, Any] = {
        "n_participants": n,
        "n_minority": int(is_min.sum()),
        "minority": label.item() if isinstance(label, np.generic) else label,
        "groups": {
            str(k): int(v)
            for k, v in zip(*np.unique(g.astype(str), return_counts=True), strict=True)
        },
        "excluded": pop.excluded,
        "eps": before.eps,
        "eps_quantile": eps_quantile,
        "clusters": clusters,
        "bootstrap": bootstrap,
        "draws": draws,
        "curve_draws": curve_draws,
        "seed": seed,
        "compliance_mapping": probability_source,
        "before": _values(before),
        "strategies": {},
    }
    arms = [("strategy", pop, probability)]
    for col, other in (by or {}).items():
        if len(other.participants) != n or not np.array_equal(other.participants, pop.participants):
            raise EffectsError(f"grouping {col!r}: not the same participants as the strategies")
        arms.append((col, other, (by_probability or {}).get(col)))
    total = sum(len(a.strategies) for _, a, _ in arms)
    done = 0
    families: dict[str, int] = {}
    for col, apop, prob in arms:
        if prob is None:
            prob = {
                s: rating_probability(apop.action[s], apop.impossible[s]) for s in apop.strategies
            }
        table: dict[str, Any] = {}
        for s in apop.strategies:
            table[s] = _arm(
                apop, s, prob[s], out["before"], boot, before_boot, idx, rng, draws, curve_draws
            )
            done += 1
            if progress is not None:
                progress("arms", done, total)
        families[col] = _holm_verdicts(table)
        if col == "strategy":
            out["strategies"] = table
        else:
            out.setdefault("by", {})[col] = table
            out.setdefault("rows_without_value", {})[col] = apop.rows_without_value
    out["bootstrap_usable"] = boot.usable
    out["multiplicity"] = multiplicity(families, boot.usable)
    return EffectsResult(out)


def _arm(
    pop: StudyPopulation,
    s: str,
    p: np.ndarray,
    before: dict[str, float],
    boot: _Bootstrap,
    before_boot: np.ndarray,
    idx: Callable[[np.ndarray], dict[str, float]],
    rng: np.random.Generator,
    draws: int,
    curve_draws: int,
) -> dict[str, Any]:
    """One arm (a strategy, method or origin): after, bootstrap difference, verdicts,
    rating-implied partial compliance and the compliance curve."""
    after = idx(pop.cf[s])
    diff = {i: after[i] - before[i] for i in names()}
    changes = boot.indices(pop.cf[s]) - before_boot  # (usable resamples, indices)
    difference = {}
    for j, i in enumerate(names()):
        v = changes[:, j]
        ci = [float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5))] if len(v) else None
        difference[i] = {
            "estimate": diff[i],
            "ci95": ci,
            "bootstrap_mean": float(v.mean()) if len(v) else None,
            "p": bootstrap_pvalue(v) if len(v) else None,  # None: JSON has no NaN
            "verdict_95": verdict(i, ci),
        }
    partial = _partial(pop.X0, pop.cf[s], p, draws, rng, idx)
    n_shown = int(pop.shown[s].sum())
    partial_share_of_shown = partial["share_implemented"] * len(p) / n_shown if n_shown else 0.0
    curve: dict[str, Any] = {"pi": list(CURVE_PI), **{i: [] for i in names()}}
    shown = pop.shown[s]
    for pi in CURVE_PI:
        res = _partial(pop.X0, pop.cf[s], np.where(shown, pi, 0.0), curve_draws, rng, idx)
        for i in names():
            curve[i].append(res[i]["mean"])
    return {
        "n_shown": n_shown,
        "n_impossible": int(pop.impossible[s].sum()),
        "after": after,
        "difference": difference,
        "bootstrap_used": len(changes),
        "worse_point_estimate": _worse(diff),
        "partial": {
            "mean_probability": float(p.mean()),
            **partial,
            "share_of_shown_implemented": float(partial_share_of_shown),
        },
        "curve": curve,
    }


def _partial(
    X0: np.ndarray,
    X1: np.ndarray,
    p: np.ndarray,
    draws: int,
    rng: np.random.Generator,
    idx: Callable[[np.ndarray], dict[str, float]],
) -> dict[str, Any]:
    """Monte-Carlo draws of who implements (probability p each). When every p is 0 or
    1 all draws are the same: the rng is still advanced as for random draws (so later
    numbers do not depend on it), and the indices are computed once and reported
    exactly (a mean of equal floats can be off by an ulp)."""
    certain = bool(np.all((p == 0.0) | (p == 1.0)))
    vals: dict[str, list[float]] = {i: [] for i in names()}
    shares = []
    once: dict[str, float] | None = None
    for _ in range(draws):
        act = rng.random(len(p)) < p
        shares.append(act.mean())
        if certain and once is not None:
            r = once
        else:
            r = idx(np.where(act[:, None], X1, X0))
            once = r
        for i in names():
            vals[i].append(r[i])
    if certain and draws:
        share = float(shares[0])
    else:
        share = float(np.mean(shares)) if shares else math.nan
    out: dict[str, Any] = {"share_implemented": share}
    for i in names():
        v = np.array(vals[i])
        if certain and once is not None:
            out[i] = {"mean": once[i], "sd": 0.0, "q025": once[i], "q975": once[i]}
            continue
        out[i] = {
            "mean": float(v.mean()) if len(v) else math.nan,
            "sd": float(v.std(ddof=1)) if len(v) > 1 else 0.0,
            "q025": float(np.percentile(v, 2.5)) if len(v) else math.nan,
            "q975": float(np.percentile(v, 97.5)) if len(v) else math.nan,
        }
    return out
