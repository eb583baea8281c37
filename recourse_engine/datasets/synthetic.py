"""The seed paper's synthetic data: four 2-D Gaussian groups of 200 points (group x outcome).

Gao & Lakkaraju (2023), Section 6 and Figure 2a; the parameters are those of the
authors' notebook: means (0, 10) male-repay, (5, 5) female-repay, (-5, -10) male-default,
(0, -15) female-default, covariance 5 I, then each feature divided by its largest
absolute value and mapped to [0, 1] by (v + 1) / 2. Both features are mutable, sex is
immutable (the sensitive attribute, male = group 1).
"""

from __future__ import annotations

import numpy as np

from ..schema import FeatureSchema, load_schema
from .base import Dataset, DatasetError

MEANS = {  # (group, outcome) -> mean before scaling
    (1, 1): (0.0, 10.0),
    (0, 1): (5.0, 5.0),
    (1, 0): (-5.0, -10.0),
    (0, 0): (0.0, -15.0),
}
VARIANCE = 5.0


def synthetic_schema() -> FeatureSchema:
    return load_schema(
        {
            "name": "synthetic",
            "profile_items": [
                {"key": "x1", "type": "numeric", "min": 0.0, "max": 1.0, "constraint": "any"},
                {"key": "x2", "type": "numeric", "min": 0.0, "max": 1.0, "constraint": "any"},
                {
                    "key": "sex",
                    "type": "binary",
                    "options": ["female", "male"],
                    "constraint": "fixed",
                },
            ],
        }
    )


def synthetic(seed: int = 0, n_per_group: int = 200) -> Dataset:
    """Draw the four groups with a seeded generator; rows ordered group by group."""
    if not isinstance(n_per_group, int) or n_per_group < 2:
        raise DatasetError(f"synthetic: n_per_group must be an integer >= 2, got {n_per_group!r}")
    rng = np.random.default_rng(seed)
    blocks, ys, gs = [], [], []
    for (g, y), mu in MEANS.items():
        blocks.append(rng.multivariate_normal(mu, VARIANCE * np.eye(2), size=n_per_group))
        ys.append(np.full(n_per_group, y))
        gs.append(np.full(n_per_group, g))
    xy = np.vstack(blocks)
    xy = (xy / np.abs(xy).max(axis=0) + 1.0) / 2.0
    group = np.concatenate(gs)
    codes = np.column_stack([xy, group + 1.0])  # sex code: 1 female, 2 male
    return Dataset(
        name="synthetic",
        schema=synthetic_schema(),
        codes=codes,
        y=np.concatenate(ys).astype(int),
        group=group.astype(int),
        sensitive="sex",
        group_labels=("female", "male"),
    )
