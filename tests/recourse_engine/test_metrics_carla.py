"""CARLA's benchmark metrics under CARLA's meanings, against direct formulas on a hand-made
model: robustness invalidation (Gaussian perturbation), redundancy, constraint violation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from recourse_engine.metrics import (
    changed_items,
    constraint_violation,
    redundancy,
    robustness_invalidation,
)
from recourse_engine.schema import load_schema

SCHEMA = load_schema(
    {
        "name": "t",
        "profile_items": [
            {"key": "a", "type": "numeric", "min": 0.0, "max": 10.0, "constraint": "any"},
            {"key": "b", "type": "numeric", "min": 0.0, "max": 1.0, "constraint": "up"},
            {"key": "c", "type": "numeric", "min": 0.0, "max": 1.0, "constraint": "fixed"},
        ],
    }
)


class Step:
    """Approves when a/10 + b >= 1 (normalised scale); the probability is the indicator."""

    name, schema_hash, relative_to_factual = "step", None, False

    def predict_proba(self, codes, income=None, *, factual_income=None):
        c = np.atleast_2d(codes)
        return (c[:, 0] / 10 + c[:, 1] >= 1).astype(float)

    def approves(self, codes, income=None, *, factual_income=None):
        return self.predict_proba(codes) >= 0.5


def test_robustness_invalidation_matches_the_gaussian_formula():
    # a/10 + b - 1 = m on the normalised scale; noise on a/10 and b each N(0, var):
    # P(approve) = P(m + e1 + e2 >= 0) = Phi(m / sqrt(2 var))
    var = 0.01
    cf = np.array([[6.0, 0.5, 0.3], [10.0, 1.0, 0.0], [np.nan] * 3])
    got = robustness_invalidation(SCHEMA, cf, Step(), var=var, n_samples=40_000, seed=1)
    for i, m in enumerate((0.1, 1.0)):
        want = 1 - norm.cdf(m / math.sqrt(2 * var))
        assert got[i] == pytest.approx(want, abs=0.01)
    assert math.isnan(got[2])
    # on the boundary half the perturbations fall back
    edge = robustness_invalidation(SCHEMA, np.array([[5.0, 0.5, 0.0]]), Step(), n_samples=40_000)
    assert edge[0] == pytest.approx(0.5, abs=0.01)


def test_redundancy_counts_changes_that_were_not_needed():
    x = np.array([[2.0, 0.2, 0.5], [2.0, 0.2, 0.5], [2.0, 0.2, 0.5]])
    cf = np.array(
        [
            [10.0, 1.0, 0.5],  # both changed; either alone suffices: 2 redundant
            [8.0, 0.2, 0.5],  # only a changed, needed: 0
            [np.nan] * 3,
        ]
    )
    got = redundancy(x, cf, Step())
    assert got[0] == 2.0 and got[1] == 0.0 and math.isnan(got[2])


def test_constraint_violation_counts_fixed_and_direction_breaks():
    x = np.array([[2.0, 0.5, 0.5]] * 3)
    cf = np.array([[9.0, 0.7, 0.5], [9.0, 0.2, 0.9], [np.nan] * 3])
    got = constraint_violation(SCHEMA, x, cf)
    assert got[0] == 0.0 and got[1] == 2.0 and math.isnan(got[2])


def test_changed_items_counts_changed_codes_per_factual_and_nan_without_recourse():
    x = np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    cf = np.array([[1.0, 5.0, 4.0], [1.0, 2.0, 3.0], [np.nan, np.nan, np.nan]])
    out = changed_items(x, cf)
    assert out[:2].tolist() == [2.0, 0.0] and np.isnan(out[2])
