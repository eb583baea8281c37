"""Recourse metrics: cost, cost gap, success (coverage) per group, yNN, invalidation.

Rows of `counterfactuals` that are all-NaN mean "no recourse found" for that
factual; they count against success and invalidation and are left out of costs.
Gaps between groups are max − min of the group values (the absolute difference
for two groups), so they are defined for any number of groups.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.neighbors import NearestNeighbors

from .decision import DecisionModel
from .design import parse_design
from .encoding import normalise
from .pool import Pool
from .schema import FeatureSchema


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
    part = parse_design(f"lowest_cost@{distance}:1").parts[0]
    assert part.distance is not None
    x = np.atleast_2d(np.asarray(factuals, dtype=float))
    cf = np.atleast_2d(np.asarray(counterfactuals, dtype=float))
    if x.shape != cf.shape:
        raise ValueError(f"factuals {x.shape} and counterfactuals {cf.shape} differ in shape")
    out = np.full(len(x), np.nan)
    for i in np.flatnonzero(found_mask(cf)):
        out[i] = part.distance(schema, x[i], cf[i : i + 1], mad=mad)[0]
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


def invalidation_rate(
    counterfactuals: np.ndarray,
    model: DecisionModel,
    *,
    cf_income: np.ndarray | None = None,
    factual_income: np.ndarray | None = None,
) -> float:
    """Share of factuals without a counterfactual the model approves (none found counts)."""
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
