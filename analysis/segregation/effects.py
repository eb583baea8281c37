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
  distribution. Compliance curves: everyone implements with one probability π.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from recourse_engine import FeatureSchema, normalise

from .indices import IndexResult, segregation_indices, split_groups

INDICES = ("centralization", "atkinson", "avg_proximity")
WORSE_IF_HIGHER = {"centralization": True, "atkinson": True, "avg_proximity": False}
CURVE_PI = (0.0, 0.25, 0.5, 0.75, 1.0)


class EffectsError(ValueError):
    """An export or option the effects cannot be computed from; says what and where."""


@dataclass
class StudyPopulation:
    participants: np.ndarray  # ids
    groups: np.ndarray  # group value of each participant
    X0: np.ndarray  # normalised original profiles (n, p)
    strategies: list[str]
    cf: dict[str, np.ndarray] = field(default_factory=dict)  # normalised recourse (n, p)
    shown: dict[str, np.ndarray] = field(default_factory=dict)  # had a recourse of s
    impossible: dict[str, np.ndarray] = field(default_factory=dict)
    action: dict[str, np.ndarray] = field(default_factory=dict)  # rating (nan if none)
    chosen: dict[str, pd.DataFrame] = field(default_factory=dict)  # the evaluation rows used
    excluded: dict[str, int] = field(default_factory=dict)


def rating_probability(action: np.ndarray, impossible: np.ndarray) -> np.ndarray:
    """(action − 1)/6, and 0 where an item was marked impossible or nothing was shown."""
    a = np.asarray(action, dtype=float)
    p = np.where(np.isfinite(a), (a - 1.0) / 6.0, 0.0)
    return np.where(np.asarray(impossible, dtype=bool), 0.0, np.clip(p, 0.0, 1.0))


def gamm_probability(pop: StudyPopulation, evaluations: pd.DataFrame) -> dict[str, np.ndarray]:
    """p from the GAMM action ~ s(proximity) + participant effects, fitted on the
    evaluations without impossible items and predicted for each chosen recourse."""
    from analysis.gamm import fit_gamm  # imported here: optional, heavy

    kept = evaluations.loc[evaluations["any_impossible"] == 0]
    if kept["participant"].nunique() < 2:
        raise EffectsError("the GAMM needs evaluations from at least 2 participants")
    fit = fit_gamm(kept, outcome="action", distance="proximity", participant="participant")
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
) -> StudyPopulation:
    """Participants with a complete profile, their group, and their recourse per strategy."""
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
    strategies = sorted(ev["strategy"].dropna().astype(str).unique())
    if not strategies:
        raise EffectsError("evaluations.csv: no evaluations of the participants in the analysis")
    pop = StudyPopulation(ids, pa[group].to_numpy(), X0, strategies, excluded=excluded)
    for s in strategies:
        rows = ev.loc[ev["strategy"].astype(str) == s].drop_duplicates("participant")
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
    return {k: float(getattr(r, k)) for k in INDICES}


def _worse(diff: dict[str, float]) -> list[str]:
    return [k for k in INDICES if (diff[k] > 0) == WORSE_IF_HIGHER[k] and diff[k] != 0]


def compute_effects(
    pop: StudyPopulation,
    *,
    minority: Any = None,
    eps_quantile: float = 0.2,
    clusters: int = 30,
    bootstrap: int = 200,
    draws: int = 200,
    curve_draws: int = 50,
    probability: dict[str, np.ndarray] | None = None,
    probability_source: str = "rating",
    seed: int = 0,
    progress: Callable[[str, int, int], None] | None = None,
) -> dict[str, Any]:
    """Indices before/after each strategy, bootstrap intervals, partial compliance."""
    is_min, label = split_groups(pop.groups, minority)
    g = pop.groups
    n = len(g)
    before = segregation_indices(
        pop.X0, g, minority=label, eps_quantile=eps_quantile, clusters=clusters, seed=seed
    )
    fixed = {"eps": before.eps, "kmeans": before.kmeans, "minority": label, "n_jobs": 1}

    def idx(X: np.ndarray, rows: np.ndarray | None = None) -> dict[str, float] | None:
        if rows is not None:
            X, gg = X[rows], g[rows]
            if is_min[rows].sum() < 2 or (~is_min[rows]).sum() < 1:
                return None
        else:
            gg = g
        return _values(segregation_indices(X, gg, **fixed))

    rng = np.random.default_rng(seed)
    boots = [rng.integers(0, n, size=n) for _ in range(bootstrap)]
    before_boot = [idx(pop.X0, b) for b in boots]
    if probability is None:
        probability = {
            s: rating_probability(pop.action[s], pop.impossible[s]) for s in pop.strategies
        }

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
        "seed": seed,
        "compliance_mapping": probability_source,
        "before": _values(before),
        "strategies": {},
    }
    total = len(pop.strategies)
    for k, s in enumerate(pop.strategies, 1):
        after = idx(pop.cf[s])
        assert after is not None
        diff = {i: after[i] - out["before"][i] for i in INDICES}
        boot_d: dict[str, list[float]] = {i: [] for i in INDICES}
        for b, bb in zip(boots, before_boot, strict=True):
            a = idx(pop.cf[s], b)
            if a is None or bb is None:
                continue
            for i in INDICES:
                boot_d[i].append(a[i] - bb[i])
        difference = {}
        sig_worse = []
        for i in INDICES:
            v = np.array(boot_d[i])
            ci = [float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5))] if len(v) else None
            boot_mean = float(v.mean()) if len(v) else None
            difference[i] = {"estimate": diff[i], "ci95": ci, "bootstrap_mean": boot_mean}
            if ci is not None and ((ci[0] > 0) if WORSE_IF_HIGHER[i] else (ci[1] < 0)):
                sig_worse.append(i)
        p = probability[s]
        partial = _partial(pop.X0, pop.cf[s], p, draws, rng, idx)
        curve = {"pi": list(CURVE_PI), **{i: [] for i in INDICES}}
        possible = pop.shown[s] & ~pop.impossible[s]
        for pi in CURVE_PI:
            res = _partial(pop.X0, pop.cf[s], np.where(possible, pi, 0.0), curve_draws, rng, idx)
            for i in INDICES:
                curve[i].append(res[i]["mean"])
        worse = _worse(diff)
        out["strategies"][s] = {
            "n_shown": int(pop.shown[s].sum()),
            "n_impossible": int(pop.impossible[s].sum()),
            "after": after,
            "difference": difference,
            "bootstrap_used": len(boot_d["centralization"]),
            "worse": worse,
            "n_worse": len(worse),
            "worse_ci_excludes_0": sig_worse,
            "partial": {"mean_probability": float(p.mean()), **partial},
            "curve": curve,
        }
        if progress is not None:
            progress("strategies", k, total)
    return out


def _partial(
    X0: np.ndarray,
    X1: np.ndarray,
    p: np.ndarray,
    draws: int,
    rng: np.random.Generator,
    idx: Callable[[np.ndarray], dict[str, float] | None],
) -> dict[str, Any]:
    vals: dict[str, list[float]] = {i: [] for i in INDICES}
    shares = []
    for _ in range(draws):
        act = rng.random(len(p)) < p
        shares.append(act.mean())
        r = idx(np.where(act[:, None], X1, X0))
        assert r is not None
        for i in INDICES:
            vals[i].append(r[i])
    out: dict[str, Any] = {"share_implemented": float(np.mean(shares)) if shares else math.nan}
    for i in INDICES:
        v = np.array(vals[i])
        out[i] = {
            "mean": float(v.mean()) if len(v) else math.nan,
            "sd": float(v.std(ddof=1)) if len(v) > 1 else 0.0,
            "q025": float(np.percentile(v, 2.5)) if len(v) else math.nan,
            "q975": float(np.percentile(v, 97.5)) if len(v) else math.nan,
        }
    return out
