"""Recourse metrics: cost, cost gap, success (coverage) per group, yNN, failure rate, CARLA's
robustness invalidation, redundancy and constraint violation, and the fairness-of-recourse
notions of FACTS (Kavouras et al., NeurIPS 2023).

Rows of `counterfactuals` that are all-NaN mean "no recourse found" for that
factual; they count against success and invalidation and are left out of costs.
Gaps between groups are max − min of the group values (the absolute difference
for two groups), so they are defined for any number of groups; a group may be the
intersection of two attributes (`intersect_groups`).

FACTS (Kavouras et al., "Fairness Aware Counterfactuals for Subgroups", NeurIPS 2023) judges the *actions* that
recourse proposes by how well they work for each protected group. An action here is the
change from a factual to its counterfactual, transferred to another person with
`transfer_actions` (graded items shift by the same amount, categorical and binary items are
set to the counterfactual's value; fixed items and moves against up/down are not applied).
The effectiveness eff(a, G) of action a for group G is the share of G's (rejected) people
that the model approves after taking a.

* equal effectiveness: eff(A, G) = share of G for whom at least one action of the set A is
  effective; fair when eff(A, G) is equal across groups (`equal_effectiveness`, the gap);
* equal choice for recourse: the number of actions of A with eff(a, G) >= phi; fair when
  equal across groups (`equal_choice_of_recourse` reports it as a share of |A| and the gap).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from sklearn.neighbors import NearestNeighbors

from .decision import DecisionModel
from .distances import Distance, get_distance
from .encoding import normalise
from .pool import Pool
from .schema import FeatureSchema


def _named_distance(text: str) -> Distance:
    """A distance by the name a design uses (`l2`, `weighted[1,0.5,0,0]`); read here, not by
    the design parser, because the strategy table's methods import this module."""
    m = re.fullmatch(r"\s*([a-z][a-z0-9_]*)(?:\[([^\]]*)\])?\s*", text)
    if not m:
        raise ValueError(f"distance {text!r}: expected a name such as l2 or weighted[1,0.5,0,0]")
    try:
        params = tuple(float(v) for v in m[2].split(",")) if m[2] else ()
    except ValueError:
        raise ValueError(f"distance {text!r}: weights must be numbers") from None
    return get_distance(m[1], params)


def found_mask(counterfactuals: np.ndarray) -> np.ndarray:
    cf = np.atleast_2d(np.asarray(counterfactuals, dtype=float))
    return ~np.isnan(cf).any(axis=1)


def recourse_cost(
    schema: FeatureSchema,
    factuals: np.ndarray,
    counterfactuals: np.ndarray,
    distance: str = "l2",
    mad: np.ndarray | None = None,
) -> np.ndarray:
    """Cost of each factual's counterfactual under a named distance; NaN where none was found."""
    named = _named_distance(distance)
    x = np.atleast_2d(np.asarray(factuals, dtype=float))
    cf = np.atleast_2d(np.asarray(counterfactuals, dtype=float))
    if x.shape != cf.shape:
        raise ValueError(f"factuals {x.shape} and counterfactuals {cf.shape} differ in shape")
    out = np.full(len(x), np.nan)
    for i in np.flatnonzero(found_mask(cf)):
        out[i] = named(schema, x[i], cf[i : i + 1], mad=mad)[0]
    return out


def _groups(groups: Sequence[object] | np.ndarray, n: int) -> np.ndarray:
    g = np.asarray(groups, dtype=object)
    if g.shape != (n,):
        raise ValueError(f"groups must have one label per row ({n}), got shape {g.shape}")
    return g


def group_means(values: np.ndarray, groups: Sequence[object] | np.ndarray) -> dict[str, float]:
    """Mean of the finite values per group label."""
    v = np.asarray(values, dtype=float)
    g = _groups(groups, len(v))
    out = {}
    for label in sorted({str(x) for x in g}):
        sel = (g.astype(str) == label) & np.isfinite(v)
        out[label] = float(v[sel].mean()) if sel.any() else float("nan")
    return out


def _gap(per_group: dict[str, float]) -> float:
    vals = [v for v in per_group.values() if np.isfinite(v)]
    return float(max(vals) - min(vals)) if len(vals) >= 2 else float("nan")


def cost_gap(
    costs: np.ndarray, groups: Sequence[object] | np.ndarray
) -> tuple[dict[str, float], float]:
    """Mean recourse cost per group (found recourses only) and the gap between groups."""
    per = group_means(costs, groups)
    return per, _gap(per)


def success_rates(
    found: np.ndarray, groups: Sequence[object] | np.ndarray
) -> tuple[dict[str, float], float]:
    """Share of each group's factuals that received a recourse (coverage), and the gap."""
    f = np.asarray(found, dtype=bool).astype(float)
    per = group_means(f, groups)
    return per, _gap(per)


def ynn(
    schema: FeatureSchema,
    counterfactuals: np.ndarray,
    pool: Pool,
    model: DecisionModel,
    *,
    k: int = 5,
    cf_income: np.ndarray | None = None,
    factual_income: np.ndarray | None = None,
) -> float:
    """yNN = 1 − (1/nk) Σ_cf Σ_{j ∈ kNN(cf)} |h(cf) − h(x_j)| over found counterfactuals.

    Neighbours are the k nearest pool members on the normalised scale; h is the model's
    approval (for the income rule, relative to each factual's income).
    """
    if k < 1 or k > len(pool):
        raise ValueError(f"k must be in 1..{len(pool)}, got {k}")
    cf = np.atleast_2d(np.asarray(counterfactuals, dtype=float))
    ok = found_mask(cf)
    if not ok.any():
        return float("nan")
    nn = NearestNeighbors(n_neighbors=k).fit(normalise(schema, pool.codes))
    _, nbr = nn.kneighbors(normalise(schema, cf[ok]))
    rows = np.flatnonzero(ok)
    total = 0.0
    if model.relative_to_factual:
        if factual_income is None or cf_income is None:
            raise ValueError("a factual-relative model needs cf_income and factual_income")
        for r, nb in zip(rows, nbr, strict=True):
            h_cf = model.approves(
                cf[r : r + 1], cf_income[r : r + 1], factual_income=factual_income[r]
            )
            h_nb = model.approves(pool.codes[nb], pool.income[nb], factual_income=factual_income[r])
            total += np.abs(h_cf.astype(float) - h_nb.astype(float)).sum()
    else:
        h_pool = model.approves(pool.codes, pool.income).astype(float)
        inc = None if cf_income is None else np.asarray(cf_income)[ok]
        h_cf = model.approves(cf[ok], inc).astype(float)
        total = float(np.abs(h_cf[:, None] - h_pool[nbr]).sum())
    return float(1.0 - total / (len(rows) * k))


def failure_rate(
    counterfactuals: np.ndarray,
    model: DecisionModel,
    *,
    cf_income: np.ndarray | None = None,
    factual_income: np.ndarray | None = None,
) -> float:
    """Share of factuals without a counterfactual the model approves (none found counts).

    Formerly `invalidation_rate`; renamed because CARLA's `InvalidationRate` is another
    thing (`robustness_invalidation_rate`, below)."""
    cf = np.atleast_2d(np.asarray(counterfactuals, dtype=float))
    if not len(cf):
        return float("nan")
    ok = found_mask(cf)
    valid = np.zeros(len(cf), dtype=bool)
    rows = np.flatnonzero(ok)
    inc = None if cf_income is None else np.asarray(cf_income, dtype=float)
    if not model.relative_to_factual:  # one batched call
        if rows.size:
            valid[rows] = model.approves(cf[rows], None if inc is None else inc[rows])
        return float(1.0 - valid.mean())
    if factual_income is None:
        raise ValueError("a factual-relative model needs factual_income")
    for i in rows:
        valid[i] = bool(
            model.approves(
                cf[i : i + 1],
                None if inc is None else inc[i : i + 1],
                factual_income=float(factual_income[i]),
            )[0]
        )
    return float(1.0 - valid.mean())


# ---------------------------------------------------------------------------------------
# fairness of recourse (FACTS) and the quality metrics of the fair-recourse experiments


def intersect_groups(
    a: Sequence[object] | np.ndarray, b: Sequence[object] | np.ndarray
) -> np.ndarray:
    """Labels of the intersection of two group attributes: "a|b" per row."""
    ga, gb = np.asarray(a, dtype=object), np.asarray(b, dtype=object)
    if ga.shape != gb.shape or ga.ndim != 1:
        raise ValueError(f"group attributes differ in shape: {ga.shape} and {gb.shape}")
    return np.array([f"{x}|{y}" for x, y in zip(ga, gb, strict=True)], dtype=object)


def proportion_difference(
    found: np.ndarray, groups: Sequence[object] | np.ndarray
) -> tuple[dict[str, float], float]:
    """Success rate per group (share of the group's factuals with a valid recourse) and the
    proportion difference (PD) between groups: max − min, |SR_0 − SR_1| for two groups."""
    return success_rates(found, groups)


def transfer_actions(
    schema: FeatureSchema, targets: np.ndarray, factual: np.ndarray, counterfactual: np.ndarray
) -> np.ndarray:
    """Apply the action factual -> counterfactual to target profiles (codes, broadcast).

    Graded items shift by the counterfactual's change (clipped to the item's range, ordinal
    codes rounded); categorical and binary items that the action changes are set to the
    counterfactual's value; fixed items are left alone, and a change that would move a
    target's up/down item the forbidden way is not applied to that item.
    """
    t = np.asarray(targets, dtype=float)
    f = np.asarray(factual, dtype=float)
    c = np.asarray(counterfactual, dtype=float)
    shape = np.broadcast_shapes(t.shape, f.shape, c.shape)
    t, f, c = (np.broadcast_to(v, shape) for v in (t, f, c))
    out = np.array(t, dtype=float, copy=True)
    for j, it in enumerate(schema.items):
        if it.constraint == "fixed":
            continue
        if it.is_graded:
            new = np.clip(t[..., j] + (c[..., j] - f[..., j]), it.min_value, it.max_value)
            if not it.is_numeric:
                new = np.round(new)
        else:
            new = np.where(np.abs(c[..., j] - f[..., j]) > 1e-9, c[..., j], t[..., j])
        if it.constraint == "up":
            new = np.maximum(new, t[..., j])
        elif it.constraint == "down":
            new = np.minimum(new, t[..., j])
        out[..., j] = new
    return out


def action_effectiveness(
    schema: FeatureSchema,
    model: DecisionModel,
    factuals: np.ndarray,
    counterfactuals: np.ndarray,
    population: np.ndarray,
    *,
    chunk: int = 200_000,
) -> np.ndarray:
    """(n_actions, n_people) approvals after each action (factuals[a] -> counterfactuals[a])
    is taken by each person of `population`."""
    f = np.atleast_2d(np.asarray(factuals, dtype=float))
    c = np.atleast_2d(np.asarray(counterfactuals, dtype=float))
    pop = np.atleast_2d(np.asarray(population, dtype=float))
    out = np.zeros((len(f), len(pop)), dtype=bool)
    step = max(1, chunk // max(1, len(pop)))
    for s in range(0, len(f), step):
        moved = transfer_actions(
            schema, pop[None, :, :], f[s : s + step, None, :], c[s : s + step, None, :]
        )
        ok = np.asarray(model.approves(moved.reshape(-1, schema.d)), dtype=bool)
        out[s : s + step] = ok.reshape(-1, len(pop))
    return out


def _facts_effectiveness(
    schema: FeatureSchema,
    model: DecisionModel,
    factuals: np.ndarray,
    counterfactuals: np.ndarray,
    groups: Sequence[object] | np.ndarray,
    max_actions: int,
    max_per_group: int,
    seed: int,
) -> dict[str, np.ndarray | None]:
    """What FACTS' per-group measures score: per group, the (|A|, group) effectiveness matrix
    of the actions A (the valid recourses' actions, at most `max_actions` drawn with `seed`)
    for the group's factuals (at most `max_per_group`, drawn with `seed`); None without
    actions."""
    x = np.atleast_2d(np.asarray(factuals, dtype=float))
    cf = np.atleast_2d(np.asarray(counterfactuals, dtype=float))
    g = _groups(groups, len(x)).astype(str)
    rng = np.random.default_rng(seed)
    rows = np.flatnonzero(found_mask(cf))
    if len(rows) > max_actions:
        rows = np.sort(rng.choice(rows, max_actions, replace=False))
    fa, ca = x[rows], cf[rows]
    out: dict[str, np.ndarray | None] = {}
    for label in sorted(set(g)):
        idx = np.flatnonzero(g == label)
        if len(idx) > max_per_group:
            idx = np.sort(rng.choice(idx, max_per_group, replace=False))
        out[label] = action_effectiveness(schema, model, fa, ca, x[idx]) if len(fa) else None
    return out


def equal_effectiveness(
    schema: FeatureSchema,
    model: DecisionModel,
    factuals: np.ndarray,
    counterfactuals: np.ndarray,
    groups: Sequence[object] | np.ndarray,
    *,
    max_actions: int = 100,
    max_per_group: int = 500,
    seed: int = 0,
) -> tuple[dict[str, float], float]:
    """FACTS' equal effectiveness: per group G, eff(A, G) = share of G's factuals for whom
    at least one action of A (the valid recourses' actions, at most `max_actions` of them
    drawn with `seed`) is effective; and the gap between groups (0: equally effective).

    At most `max_per_group` factuals per group are tried (drawn with `seed`).
    """
    effective = _facts_effectiveness(
        schema, model, factuals, counterfactuals, groups, max_actions, max_per_group, seed
    )
    per = {k: 0.0 if e is None else float(e.any(axis=0).mean()) for k, e in effective.items()}
    return per, _gap(per)


def equal_choice_of_recourse(
    schema: FeatureSchema,
    model: DecisionModel,
    factuals: np.ndarray,
    counterfactuals: np.ndarray,
    groups: Sequence[object] | np.ndarray,
    *,
    phi: float = 0.5,
    max_actions: int = 100,
    max_per_group: int = 500,
    seed: int = 0,
) -> tuple[dict[str, float], float]:
    """FACTS' equal choice for recourse: per group G, the share of the actions of A whose
    effectiveness for G reaches `phi` (the number of actions, divided by |A|); and the gap
    between groups (0: every group has as many effective choices)."""
    if not 0.0 <= phi <= 1.0:
        raise ValueError(f"phi must be in [0, 1], got {phi}")
    effective = _facts_effectiveness(
        schema, model, factuals, counterfactuals, groups, max_actions, max_per_group, seed
    )
    per = {
        k: 0.0 if e is None else float((e.mean(axis=1) >= phi).mean()) for k, e in effective.items()
    }
    return per, _gap(per)


def validity(counterfactuals: np.ndarray, model: DecisionModel) -> float:
    """Share of factuals whose counterfactual the model approves (1 − invalidation)."""
    return 1.0 - failure_rate(counterfactuals, model)


def gower_similarity_mean(
    schema: FeatureSchema, factuals: np.ndarray, counterfactuals: np.ndarray
) -> float:
    """Mean Gower similarity (1 − Gower distance) of the found counterfactuals to their
    factuals."""
    from .gower import gower_similarity

    cf = np.atleast_2d(np.asarray(counterfactuals, dtype=float))
    ok = found_mask(cf)
    if not ok.any():
        return float("nan")
    x = np.atleast_2d(np.asarray(factuals, dtype=float))
    return float(gower_similarity(schema, x[ok], cf[ok]).mean())


def changed_items(factuals: np.ndarray, counterfactuals: np.ndarray) -> np.ndarray:
    """Per factual, how many items its counterfactual changes (CARLA's L0); NaN if none found."""
    cf = np.atleast_2d(np.asarray(counterfactuals, dtype=float))
    x = np.atleast_2d(np.asarray(factuals, dtype=float))
    out = (np.abs(cf - x) > 1e-9).sum(axis=1).astype(float)
    out[~found_mask(cf)] = np.nan
    return out


def sparsity_mean(factuals: np.ndarray, counterfactuals: np.ndarray) -> float:
    """Mean number of changed items of the found counterfactuals."""
    v = changed_items(factuals, counterfactuals)
    v = v[~np.isnan(v)]
    return float(v.mean()) if len(v) else float("nan")


def plausibility(
    schema: FeatureSchema, counterfactuals: np.ndarray, reference: np.ndarray
) -> float:
    """Mean Euclidean distance, on the normalised scale, from each found counterfactual to
    its nearest reference profile (e.g. the rows the model approves); lower is more
    plausible (closer to the data)."""
    cf = np.atleast_2d(np.asarray(counterfactuals, dtype=float))
    ok = found_mask(cf)
    ref = np.atleast_2d(np.asarray(reference, dtype=float))
    if not ok.any() or not len(ref):
        return float("nan")
    nn = NearestNeighbors(n_neighbors=1).fit(normalise(schema, ref))
    dist, _ = nn.kneighbors(normalise(schema, cf[ok]))
    return float(dist[:, 0].mean())


# ---------------------------------------------------------------------------------------
# CARLA's benchmark metrics (Pawelczyk et al., 2021), under CARLA's meanings


def robustness_invalidation(
    schema: FeatureSchema,
    counterfactuals: np.ndarray,
    model: DecisionModel,
    *,
    var: float = 0.01,
    n_samples: int = 100,
    seed: int = 0,
) -> np.ndarray:
    """CARLA's `InvalidationRate` per counterfactual: 1 − mean P(approve) over `n_samples`
    Gaussian perturbations N(cf, var·I) on the normalised scale (cf_label = 1). Graded items
    (numeric, ordinal) are perturbed, unrounded; categorical and binary items are not.
    NaN rows (none found) give NaN."""
    cf = np.atleast_2d(np.asarray(counterfactuals, dtype=float))
    out = np.full(len(cf), np.nan)
    ok = np.flatnonzero(found_mask(cf))
    if not len(ok):
        return out
    graded = np.array([it.is_graded for it in schema.items], dtype=bool)
    spans = np.array([it.span if it.span > 0 else 1.0 for it in schema.items])
    rng = np.random.default_rng(seed)
    noise = rng.normal(0.0, np.sqrt(var), size=(n_samples, len(ok), schema.d))
    noisy = cf[ok][None, :, :] + noise * (spans * graded)[None, None, :]
    proba = np.asarray(model.predict_proba(noisy.reshape(-1, schema.d)), dtype=float)
    if proba.ndim == 2:
        proba = proba[:, -1]
    out[ok] = 1.0 - proba.reshape(n_samples, len(ok)).mean(axis=0)
    return out


def redundancy(
    factuals: np.ndarray, counterfactuals: np.ndarray, model: DecisionModel
) -> np.ndarray:
    """CARLA's `Redundancy` per counterfactual: how many of its changed items could each be
    put back to the factual's value alone and the model would still approve. NaN rows: NaN."""
    x = np.atleast_2d(np.asarray(factuals, dtype=float))
    cf = np.atleast_2d(np.asarray(counterfactuals, dtype=float))
    out = np.full(len(cf), np.nan)
    for i in np.flatnonzero(found_mask(cf)):
        changed = np.flatnonzero(~np.isclose(cf[i], x[i]))
        if not len(changed):
            out[i] = 0.0
            continue
        trials = np.repeat(cf[i][None, :], len(changed), axis=0)
        trials[np.arange(len(changed)), changed] = x[i, changed]
        out[i] = float(np.sum(np.asarray(model.approves(trials), dtype=bool)))
    return out


def constraint_violation(
    schema: FeatureSchema, factuals: np.ndarray, counterfactuals: np.ndarray
) -> np.ndarray:
    """CARLA's `ConstraintViolation` per counterfactual: how many `fixed` items it changed
    (here also an up item moved down or a down item moved up). NaN rows: NaN."""
    x = np.atleast_2d(np.asarray(factuals, dtype=float))
    cf = np.atleast_2d(np.asarray(counterfactuals, dtype=float))
    con = np.array([it.constraint for it in schema.items])
    diff = cf - x
    bad = (
        ((con == "fixed")[None, :] & ~np.isclose(diff, 0.0))
        | ((con == "up")[None, :] & (diff < -1e-9))
        | ((con == "down")[None, :] & (diff > 1e-9))
    )
    out = bad.sum(axis=1).astype(float)
    out[~found_mask(cf)] = np.nan
    return out
