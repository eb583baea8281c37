"""Gower's distance for mixed item types (Gower, 1971), on a schema's item codes.

Per item i: graded items (ordinal, numeric) cost |x_i - y_i| / M_i (M_i the item's range),
categorical and binary items cost 1 when the codes differ; the Gower distance is the mean
of the per-item costs over all d items of the schema, so it lies in [0, 1], and the Gower
similarity is 1 minus it. It is the schema's `proximity` (L1) divided by d.
"""

from __future__ import annotations

import numpy as np

from .distances import CHANGE_TOL
from .schema import FeatureSchema


def gower_distance(schema: FeatureSchema, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Row-wise Gower distance between code arrays x and y (broadcast to (n, d)); NaN rows
    give NaN."""
    a = np.asarray(x, dtype=float)
    b = np.asarray(y, dtype=float)
    diff = np.abs(a - b)
    graded = schema.graded_mask
    cost = np.where(graded, diff / schema.spans, (diff > CHANGE_TOL).astype(float))
    cost = np.where(np.isnan(diff), np.nan, cost)
    return cost.mean(axis=-1)


def gower_similarity(schema: FeatureSchema, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """1 - Gower distance, row-wise."""
    return 1.0 - gower_distance(schema, x, y)
