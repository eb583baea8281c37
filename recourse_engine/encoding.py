"""The normalised item scale shared by distances, models and segregation indices.

Ordinal and numeric items map to (value - min) / M in [0, 1]; binary items to 0/1;
categorical items to a one-hot block scaled by 1/sqrt(2), so that changing the
category moves a profile by exactly 1 in Euclidean distance — the same cost a
changed categorical item has in the schema's proximity.
"""

from __future__ import annotations

import numpy as np

from .schema import FeatureSchema

ONE_HOT_SCALE = 1.0 / np.sqrt(2.0)


def feature_names(schema: FeatureSchema) -> list[str]:
    """Column names of `normalise`'s output: the item key, or key=option for one-hot columns."""
    names: list[str] = []
    for it in schema.items:
        if it.type == "categorical":
            names.extend(f"{it.key}={opt}" for opt in it.options)
        else:
            names.append(it.key)
    return names


def normalise(schema: FeatureSchema, codes: np.ndarray) -> np.ndarray:
    """Map an (n, d) matrix of item codes to the normalised scale (n, p) as float64."""
    x = np.asarray(codes, dtype=float)
    if x.ndim == 1:
        x = x[None, :]
    if x.shape[1] != schema.d:
        raise ValueError(f"expected {schema.d} item columns, got {x.shape[1]}")
    blocks: list[np.ndarray] = []
    for j, it in enumerate(schema.items):
        col = x[:, j]
        if it.type == "categorical":
            onehot = col[:, None] == np.arange(1, it.n_options + 1)[None, :]
            blocks.append(onehot.astype(float) * ONE_HOT_SCALE)
        else:
            span = it.span if it.span > 0 else 1.0
            blocks.append(((col - it.min_value) / span)[:, None])
    return np.hstack(blocks)


def denormalise(schema: FeatureSchema, z: np.ndarray) -> np.ndarray:
    """Decode points on the normalised scale back to valid item codes (nearest valid code)."""
    z = np.asarray(z, dtype=float)
    if z.ndim == 1:
        z = z[None, :]
    out = np.empty((z.shape[0], schema.d), dtype=float)
    c = 0
    for j, it in enumerate(schema.items):
        if it.type == "categorical":
            block = z[:, c : c + it.n_options]
            out[:, j] = np.argmax(block, axis=1) + 1
            c += it.n_options
        else:
            v = it.min_value + np.clip(z[:, c], 0.0, 1.0) * it.span
            out[:, j] = v if it.is_numeric else np.round(v)
            c += 1
    return out
