"""The paper's toy example: Theorems 4.1 and 5.1 for random parameter draws.

Reference: the closed forms in the proofs of Theorems 4.1 and 5.1 (Appendix A),
written out here by hand — not outputs of the code under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from analysis.segregation import segregation_indices
from analysis.segregation import toy as T


def closed_form(kind: str, u: float, a: float, b: float, c: float) -> float:
    """SI from the proofs: d12 + d14 - d11 - d13 with the Hausdorff distances listed there."""
    B = b - c
    if kind == "original":
        return B + math.hypot(B, 2 * u + a) - (2 * u + a)
    if kind == "distance":
        return B + math.hypot(B, u + a) - (u + a)
    if kind == "realistic":
        return B + math.hypot(B, a) - a
    # balanced: both defaulting groups land on the same set, so d14 = d13 and SI = d12
    return B


def _draws(n: int, seed: int):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        b = rng.uniform(0.2, 3.0)
        yield (
            rng.uniform(-3, 3),
            rng.uniform(0.05, 2.0),
            rng.uniform(0.1, 2.0),
            b,
            rng.uniform(0.02, 0.98) * b,
        )


@pytest.mark.parametrize("params", list(_draws(40, 2023)))
def test_theorems_4_1_and_5_1_on_random_draws(params):
    left, u, a, b, c = params
    toy = T.rectangles(left, u, a, b, c, k=21)
    si = {"original": T.segregation_index(toy)}
    for kind in T.RECOURSES:
        si[kind] = T.segregation_index(T.rectangle_recourse(toy, kind, left, u, a, b, c))
    for kind, value in si.items():
        assert value == pytest.approx(closed_form(kind, u, a, b, c), abs=1e-9)
    # Theorem 4.1: distance-based and realistic recourse always increase SI
    assert si["distance"] > si["original"]
    assert si["realistic"] > si["original"]
    # Theorem 5.1: balanced recourse always decreases SI
    assert si["balanced"] < si["original"]


def test_hausdorff_of_simple_sets():
    A = np.array([[0.0, 0.0], [1.0, 0.0]])
    B = np.array([[0.0, 3.0]])
    assert T.hausdorff(A, B) == pytest.approx(math.hypot(1, 3))
    assert T.hausdorff(A, A) == 0.0


def test_rectangles_refuse_parameters_outside_the_theorem():
    with pytest.raises(ValueError, match="0 < c < b"):
        T.rectangles(0, 1, 1, 1, 1.5)


@pytest.mark.parametrize("seed", range(3))
def test_four_gaussians_balanced_recourse_mixes_the_groups_most(seed):
    """Section 6.2 / Table 1 direction: balanced recourse gives the highest average
    proximity, above the original population's."""
    gt = T.gaussians(seed=seed)
    X, g = gt.toy.population()
    base = segregation_indices(X, g, clusters=10, want=("avg_proximity",))
    prox = {}
    for kind in T.RECOURSES:
        X2, _ = T.gaussian_recourse(gt, kind).population()
        prox[kind] = segregation_indices(X2, g, want=("avg_proximity",)).avg_proximity
    assert prox["balanced"] > base.avg_proximity
    assert prox["balanced"] == max(prox.values())
