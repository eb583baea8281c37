"""Distances between a factual profile x and many candidates, vectorised over candidates.

Every distance is built from one per-item cost matrix on the schema's scale:
graded items (ordinal, numeric) cost |x'_i - x_i| / M_i, categorical and binary
items cost 1 when changed. Then

* sparsity (L0)   = number of changed items,
* proximity (L1)  = sum of item costs (the reference study's proximity),
* l2              = sqrt of the sum of squared item costs,
* linf            = the largest item cost,
* mad_l1          = sum |x'_i - x_i| / MAD_i (Wachter et al.; MAD of the pool, in
                    code units; categorical/binary items cost 1 per change; an item
                    whose MAD is 0 falls back to its range M_i),
* weighted        = α·L0 + β·L1 + γ·L2 + ζ·L∞ (Karimi et al.'s survey, eq. 4).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .schema import FeatureSchema

CHANGE_TOL = 1e-9
# Costs are rounded before ranking so that equal sums of fractions tie exactly
# (e.g. 1/6 + 1/3 and 1/2 from different items).
RANK_DECIMALS = 9


def item_costs(schema: FeatureSchema, x: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """(m, d) per-item cost of moving from x to each candidate, on the schema's scale."""
    diff = np.abs(np.asarray(candidates, dtype=float) - np.asarray(x, dtype=float)[None, :])
    graded = schema.graded_mask
    return np.where(graded[None, :], diff / schema.spans[None, :], diff > CHANGE_TOL)


def changed_mask(x: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    return np.abs(np.asarray(candidates, dtype=float) - np.asarray(x, dtype=float)) > CHANGE_TOL


def sparsity(schema: FeatureSchema, x: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    return changed_mask(x, candidates).sum(axis=1)


def proximity(schema: FeatureSchema, x: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    return item_costs(schema, x, candidates).sum(axis=1)


def l2(schema: FeatureSchema, x: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    c = item_costs(schema, x, candidates)
    return np.sqrt((c * c).sum(axis=1))


def linf(schema: FeatureSchema, x: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    return item_costs(schema, x, candidates).max(axis=1, initial=0.0)


def mad_l1(
    schema: FeatureSchema, x: np.ndarray, candidates: np.ndarray, mad: np.ndarray
) -> np.ndarray:
    mad = np.asarray(mad, dtype=float)
    weights = np.where(mad > 0, mad, schema.spans)
    diff = np.abs(np.asarray(candidates, dtype=float) - np.asarray(x, dtype=float)[None, :])
    graded = schema.graded_mask
    cost = np.where(graded[None, :], diff / weights[None, :], diff > CHANGE_TOL)
    return cost.sum(axis=1)


def weighted(
    schema: FeatureSchema,
    x: np.ndarray,
    candidates: np.ndarray,
    alpha: float = 1.0,
    beta: float = 1.0,
    gamma: float = 1.0,
    zeta: float = 1.0,
) -> np.ndarray:
    c = item_costs(schema, x, candidates)
    changed = changed_mask(x, candidates)
    return (
        alpha * changed.sum(axis=1)
        + beta * c.sum(axis=1)
        + gamma * np.sqrt((c * c).sum(axis=1))
        + zeta * c.max(axis=1, initial=0.0)
    )


@dataclass(frozen=True)
class Distance:
    """A named distance with its parameters, as a design string names it."""

    name: str
    params: tuple[float, ...] = ()

    @property
    def label(self) -> str:
        if not self.params:
            return self.name
        return f"{self.name}[{','.join(f'{p:g}' for p in self.params)}]"

    def __call__(
        self,
        schema: FeatureSchema,
        x: np.ndarray,
        candidates: np.ndarray,
        mad: np.ndarray | None = None,
    ) -> np.ndarray:
        if self.name == "mad_l1":
            if mad is None:
                raise ValueError("mad_l1 needs the pool's MAD (Pool.mad())")
            return mad_l1(schema, x, candidates, mad)
        if self.name == "weighted":
            return weighted(schema, x, candidates, *self.params)
        return _SIMPLE[self.name](schema, x, candidates)


_SIMPLE: dict[str, Callable[[FeatureSchema, np.ndarray, np.ndarray], np.ndarray]] = {
    "sparsity": sparsity,
    "proximity": proximity,
    "l2": l2,
    "linf": linf,
}
ALIASES = {"l0": "sparsity", "l1": "proximity"}
DISTANCE_NAMES = (*_SIMPLE, "mad_l1", "weighted", *ALIASES)


def get_distance(name: str, params: tuple[float, ...] = ()) -> Distance:
    """Look a distance up by name; raises ValueError listing the known names."""
    canonical = ALIASES.get(name, name)
    if canonical not in (*_SIMPLE, "mad_l1", "weighted"):
        raise ValueError(f"unknown distance {name!r}; known: {', '.join(DISTANCE_NAMES)}")
    if canonical == "weighted":
        if len(params) not in (0, 4):
            raise ValueError("weighted takes four weights [alpha,beta,gamma,zeta]")
        if any(p < 0 for p in params):
            raise ValueError("weighted: weights must be >= 0")
        params = params or (1.0, 1.0, 1.0, 1.0)
    elif params:
        raise ValueError(f"distance {name!r} takes no parameters")
    return Distance(canonical, tuple(float(p) for p in params))
