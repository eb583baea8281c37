"""Actionability constraints: which candidate profiles may replace a factual profile.

`up` items may only increase, `down` only decrease, `fixed` items never change,
`any` items are free. Scans run item by item over column-major pool codes, so a
million-row pool costs d vectorised comparisons and no temporary (n, d) array.
"""

from __future__ import annotations

import numpy as np

from .distances import CHANGE_TOL
from .schema import FeatureSchema


def column_allows(
    constraint: str, col: np.ndarray, xj: float, tol: float = CHANGE_TOL
) -> np.ndarray | None:
    """Mask of a column's values allowed as the new value of an item whose value is xj
    (None when every value is allowed). tol = 0 for integer-coded columns."""
    if constraint == "up":
        return col >= xj - tol
    if constraint == "down":
        return col <= xj + tol
    if constraint == "fixed":
        return np.abs(col - xj) <= tol
    return None


def constraint_mask(schema: FeatureSchema, x: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Boolean (n,) mask of candidates that respect every item's constraint relative to x."""
    ok = np.ones(codes.shape[0], dtype=bool)
    for j, it in enumerate(schema.items):
        allowed = column_allows(it.constraint, codes[:, j], x[j])
        if allowed is not None:
            ok &= allowed
    return ok


def violations(schema: FeatureSchema, x: np.ndarray, candidate: np.ndarray) -> list[str]:
    """Item keys whose constraint the candidate breaks (empty when admissible)."""
    bad = []
    for j, it in enumerate(schema.items):
        d = candidate[j] - x[j]
        if (
            (it.constraint == "up" and d < -CHANGE_TOL)
            or (it.constraint == "down" and d > CHANGE_TOL)
            or (it.constraint == "fixed" and abs(d) > CHANGE_TOL)
        ):
            bad.append(it.key)
    return bad
