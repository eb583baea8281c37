"""Actionability constraints: which candidate profiles may replace a factual profile.

`up` items may only increase, `down` only decrease, `fixed` items never change,
`any` items are free. Scans run item by item over column-major pool codes, so a
million-row pool costs d vectorised comparisons and no temporary (n, d) array.
"""

from __future__ import annotations

import numpy as np

from .distances import CHANGE_TOL
from .schema import FeatureSchema


def constraint_mask(schema: FeatureSchema, x: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Boolean (n,) mask of candidates that respect every item's constraint relative to x."""
    n = codes.shape[0]
    ok = np.ones(n, dtype=bool)
    for j, it in enumerate(schema.items):
        c = it.constraint
        if c == "any":
            continue
        col = codes[:, j]
        if c == "up":
            ok &= col >= x[j] - CHANGE_TOL
        elif c == "down":
            ok &= col <= x[j] + CHANGE_TOL
        else:  # fixed
            ok &= np.abs(col - x[j]) <= CHANGE_TOL
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
