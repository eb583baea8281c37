"""Input checks shared by every index, so that each one refuses bad input with the same
message: a population must be finite numbers, the groups exactly two, the minority named or
the smaller one (the same whichever way the groups are labelled)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np


class SegregationInputError(ValueError):
    """Input the indices cannot be computed on; the message says what is wrong."""


def as_population(x: Any) -> np.ndarray:
    """Check and convert a population to a finite float64 (n, d) array."""
    X = np.asarray(x, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] == 0:
        raise SegregationInputError(f"population must be an (n, d) array, got shape {X.shape}")
    bad = ~np.isfinite(X)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise SegregationInputError(f"row {r + 1}, feature {c + 1}: value is NaN or infinite")
    return np.ascontiguousarray(X)


def split_groups(
    groups: Sequence[Any] | np.ndarray, minority: Any = None
) -> tuple[np.ndarray, Any]:
    """Boolean minority mask and the minority label.

    The minority is the smaller group unless named; with equal sizes, the label that
    sorts first (as text) — so relabelling groups never changes which group is which.
    """
    g = np.asarray(groups, dtype=object)
    if g.ndim != 1:
        raise SegregationInputError("groups must be one-dimensional")
    missing = np.array([v is None or (isinstance(v, float) and math.isnan(v)) for v in g])
    if missing.any():
        raise SegregationInputError(f"row {int(np.flatnonzero(missing)[0]) + 1}: group is missing")
    labels, counts = np.unique(g.astype(str), return_counts=True)
    if len(labels) != 2:
        shown = ", ".join(labels[:5])
        raise SegregationInputError(
            f"need exactly two groups, found {len(labels)}" + (f" ({shown})" if shown else "")
        )
    text = g.astype(str)
    if minority is None:
        key = labels[0] if counts[0] <= counts[1] else labels[1]
    else:
        key = str(minority)
        if key not in labels:
            raise SegregationInputError(
                f"minority {minority!r} is not one of the groups {labels[0]!r}, {labels[1]!r}"
            )
    is_min = text == key
    label = g[int(np.flatnonzero(is_min)[0])]
    if is_min.sum() < 2:
        raise SegregationInputError(
            f"the minority group {label!r} has {int(is_min.sum())} member(s); at least 2 needed"
        )
    return is_min, label
