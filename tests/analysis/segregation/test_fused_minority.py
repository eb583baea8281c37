"""The numba kernel of the minority (ε) pass (`fused_minority`) against direct counts and the
direct quantile: ties at exactly ε, partners ε·(1 ± δ) down to 1 ulp, the float32 route and
the float64 one, ragged row blocks and several column tiles; and the proximity kernel's
product form near 0 (the canonical distance there)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analysis.segregation import backends, epsilon, geometry, screen
from analysis.segregation import passes as pair_passes

fused = pytest.importorskip("analysis.segregation.fused")
pytestmark = pytest.mark.skipif(not fused.AVAILABLE, reason="numba is not installed")
from analysis.segregation import fused_minority  # noqa: E402


def _tied(seed: int, n: int = 1300, d: int = 7) -> tuple[np.ndarray, float]:
    """Quarter-coded points (thousands of pairs exactly at ε = 0.5) plus, around a few of
    them, partners at 0.5·(1 + δ), δ = 0, ±1, ±3 ulp, ±1e-12, ±1e-9, ±1e-7, ±3e-6, ±1e-4
    (inside and outside the float32 margin); more than two 512-column tiles."""
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.15) / 4.0
    deltas = [k * 2.0**-52 for k in (-3, -1, 0, 1, 3)]
    deltas += [s * t for t in (1e-12, 1e-9, 1e-7, 3e-6, 1e-4) for s in (-1.0, 1.0)]
    parts = [X]
    for c in X[rng.choice(n, size=6, replace=False)]:
        u = rng.normal(size=(len(deltas), d))
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        parts.append(c + 0.5 * (1.0 + np.array(deltas))[:, None] * u)
    return rng.permutation(np.vstack(parts)), 0.5


def _direct_within(X: np.ndarray, eps: float) -> np.ndarray:
    """Per member, the others within ε by their canonical distance (all pairs, no blocks)."""
    m = len(X)
    i, j = np.triu_indices(m, 1)
    ok = geometry.canonical_distances(X, i, j) <= eps
    return np.bincount(i[ok], minlength=m) + np.bincount(j[ok], minlength=m)


def _numba_ops(monkeypatch: pytest.MonkeyPatch, single: bool, rows: int) -> backends.NumbaOps:
    monkeypatch.setattr(backends, "_NUMBA_PAIRS", 0)  # the kernel on every pass
    monkeypatch.setattr(fused_minority, "BLOCK_ROWS", rows)
    ops = backends.NumbaOps(n_jobs=2)
    ops.single = single
    return ops


@pytest.mark.parametrize("single", [True, False])
@pytest.mark.parametrize("rows", [37, 256])
def test_minority_counts_at_and_beside_eps_equal_the_direct_count(monkeypatch, single, rows):
    X, eps = _tied(0)
    geo = geometry.make_geometry(X)
    idx = np.arange(len(X))
    ops = _numba_ops(monkeypatch, single, rows)
    op = pair_passes._minority_operands(ops, geo, idx, *geo.band(eps))
    assert op.kernel is not None and op.single == single
    near = np.abs(geometry.canonical_distances(X, *np.triu_indices(len(X), 1)) - eps)
    assert np.count_nonzero(near == 0) > 1000 and np.count_nonzero(near < 1e-12) > 1000
    got = pair_passes.minority_within_counts(ops, geo, idx, eps)
    np.testing.assert_array_equal(got, _direct_within(X, eps))


@pytest.mark.parametrize("single", [True, False])
@pytest.mark.parametrize("classes", [True, False])
def test_eps_from_the_kernel_equals_the_direct_quantile(monkeypatch, single, classes):
    """The sampled-bracket path (value counts, or kept pairs) with the kernel's pass: the
    exact order statistic, and the bracket's minority counts equal the direct ones."""
    monkeypatch.setattr(epsilon, "_SAMPLE_PAIRS", 3000)
    monkeypatch.setattr(epsilon, "_MAX_CLASSES_ON", classes)
    X, _ = _tied(1, n=900)
    X = (
        X
        + np.random.default_rng(2).normal(scale=1e-3, size=X.shape)
        * (np.arange(len(X)) % 3 == 0)[:, None]
    )
    geo = geometry.make_geometry(X)
    idx = np.arange(len(X))
    i, j = np.triu_indices(len(X), 1)
    dist = geometry.canonical_distances(X, i, j)
    ops = _numba_ops(monkeypatch, single, 64)
    for q in (0.05, 0.2, 0.5):
        e, bracket = epsilon.find_eps(ops, geo, idx, q, "distinct", 0)
        assert e == float(np.quantile(dist, q))
        counts = pair_passes.counts_from_bracket(geo, idx, bracket, e)
        assert counts is not None
        np.testing.assert_array_equal(counts, _direct_within(X, e))


def test_outliers_take_the_float64_operands(monkeypatch):
    X, eps = _tied(3, n=700)
    X = np.vstack([X, np.full((1, X.shape[1]), 3e4)])
    geo = geometry.make_geometry(X)
    idx = np.arange(len(X))
    ops = _numba_ops(monkeypatch, True, 100)
    assert not screen.operands(ops, geo, idx, idx, list(geo.band(eps))).single
    got = pair_passes.minority_within_counts(ops, geo, idx, eps)
    np.testing.assert_array_equal(got, _direct_within(X, eps))


def test_proximity_near_zero_uses_the_canonical_distance():
    """Duplicates and pairs 1e-9 apart: the product form's absolute error would be
    amplified by √; the kernel takes the canonical square there (5·tol per distance)."""
    rng = np.random.default_rng(4)
    X = rng.random((700, 19)) * 40.0  # wide data: a large tol
    X[350:400] = X[:50]
    X[400:450] = X[50:100] + 1e-9
    ri, ci = np.arange(350), np.arange(350, 700)
    _, psum = fused.cross_counts_and_sums(X, ri, ci, None, True, n_jobs=2)
    d = geometry.canonical_distances(X, np.repeat(ri, len(ci)), np.tile(ci, len(ri)))
    want = math.fsum(np.exp(-d))
    assert abs(psum - want) <= 1e-13 * want
