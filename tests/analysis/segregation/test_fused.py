"""The numba kernel of the minority × majority pass (`fused`) against numpy's blocked pass
and the direct formulas: exact counts at and beside ε, proximity within the documented
bound, ragged tiles and row blocks, each output alone; and how backends choose it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analysis.segregation import backends, geometry, passes
from analysis.segregation.inputs import SegregationInputError

fused = pytest.importorskip("analysis.segregation.fused")
pytestmark = pytest.mark.skipif(not fused.AVAILABLE, reason="numba is not installed")


def _tied_population(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Coded items, mostly at one level (thousands of pairs exactly at ε = 0.5: four items
    a quarter apart), plus majority partners of a few minority members at 0.5·(1 + k·2⁻⁵²), k = 0, ±1, ±2, ±5; 19 columns (padded to 20),
    row and column counts that fill neither a 4-row group, a 64-row task nor a 512-column
    tile."""
    rng = np.random.default_rng(seed)
    X = (rng.random((1400, 19)) < 0.2) / 4.0
    is_min = rng.random(len(X)) < 0.35
    extra = []
    for i in np.flatnonzero(is_min)[:5]:
        for k in (0, 1, -1, 2, -2, 5, -5):
            u = rng.normal(size=19)
            extra.append(X[i] + 0.5 * (1.0 + k * 2.0**-52) * u / np.linalg.norm(u))
    X = np.vstack([X, extra])
    is_min = np.concatenate([is_min, np.zeros(len(extra), bool)])
    return X, np.flatnonzero(is_min), np.flatnonzero(~is_min), 0.5


def _direct(X: np.ndarray, ri: np.ndarray, ci: np.ndarray, eps: float):
    """Per minority row the canonical distances ≤ ε, and Σ exp(−d) with libm's exp
    (numpy's canonical formula, pair by pair, no blocks)."""
    ii, jj = np.repeat(ri, len(ci)), np.tile(ci, len(ri))
    d = geometry.canonical_distances(X, ii, jj).reshape(len(ri), len(ci))
    return (d <= eps).sum(axis=1), math.fsum(math.exp(-v) for v in d.ravel())


def test_counts_and_proximity_equal_the_direct_formulas():
    X, ri, ci, eps = _tied_population(0)
    counts, psum = fused.cross_counts_and_sums(X, ri, ci, eps, True, n_jobs=2)
    want_counts, want_sum = _direct(X, ri, ci, eps)
    d = geometry.canonical_distances(X, np.repeat(ri, len(ci)), np.tile(ci, len(ri)))
    assert (d == eps).sum() > 1000  # ties at ε: the band's canonical check decides them
    assert np.array_equal(counts, want_counts)
    tol = geometry.make_geometry(X).tol
    assert abs(psum - want_sum) / (len(ri) * len(ci)) <= 5 * tol + 1e-14
    assert abs(psum - want_sum) <= 1e-13 * want_sum  # in fact a few ulps per term


def test_each_output_alone_and_thread_counts_agree():
    X, ri, ci, eps = _tied_population(1)
    both = fused.cross_counts_and_sums(X, ri, ci, eps, True, n_jobs=2)
    counts_only = fused.cross_counts_and_sums(X, ri, ci, eps, False, n_jobs=1)
    prox_only = fused.cross_counts_and_sums(X, ri, ci, None, True, n_jobs=2)
    assert counts_only[1] == 0.0 and prox_only[0] is None
    assert np.array_equal(counts_only[0], both[0])
    assert prox_only[1] == both[1]


def test_numba_backend_pass_equals_numpy_blocks(monkeypatch):
    """Through `passes.cross_pass`: the same counts as numpy's blocked pass, bit for bit,
    and the proximity sums within 5·tol per pair."""
    X, ri, ci, eps = _tied_population(2)
    geo = geometry.make_geometry(X)
    want = passes.cross_pass(backends.NumpyOps(), geo, ri, ci, eps, True)
    monkeypatch.setattr(backends, "_NUMBA_PAIRS", 0)
    stages = []
    ops = backends.make_ops("numba", n_jobs=2)
    ops.progress = lambda stage, done, total: stages.append((done, total))
    got = passes.cross_pass(ops, geo, ri, ci, eps, True)
    assert np.array_equal(got[0], want[0])
    assert abs(got[1] - want[1]) <= 5 * geo.tol * len(ri) * len(ci)
    assert stages and stages[-1][0] == stages[-1][1]


@pytest.mark.parametrize("s", [0.0, 1e-300, 1e-20, 1e-4, 0.25, 0.5, 1.0, 2.0, 9.0, 37.0, 400.0])
def test_exp_of_minus_sqrt_within_a_few_ulps(s):
    """The kernel's polynomial exp(−√s) against libm (3 ulp), and its floor beyond 708."""
    want = math.exp(-math.sqrt(s))
    assert abs(fused._exp_neg_sqrt(s) - want) <= 3 * math.ulp(want)
    assert 0 < fused._exp_neg_sqrt(1e6) <= math.exp(-708.0) * (1 + 1e-15)


def test_auto_and_numba_choose_the_kernel_and_refuse_without_numba(monkeypatch):
    monkeypatch.setattr(backends, "gpu_available", lambda: False)
    assert type(backends.make_ops("auto")) is backends.NumbaOps
    assert type(backends.make_ops("numpy")) is backends.NumpyOps
    with pytest.raises(SegregationInputError, match="runs on the CPU"):
        backends.make_ops("numba", device="cuda")
    monkeypatch.setattr(backends, "numba_available", lambda: False)
    assert type(backends.make_ops("auto")) is backends.NumpyOps
    with pytest.raises(SegregationInputError, match="needs the numba package"):
        backends.make_ops("numba")


def test_coded_items_skip_the_band_and_still_count_exactly():
    """Quarter-coded items: every sum of squares is exact, so the kernel counts s ≤ the last
    square whose sqrt is ≤ ε, with no canonical check — at an ε whose float square is below
    the tied pairs' exact squared distance (a plain s ≤ ε² would miss them)."""
    rng = np.random.default_rng(4)
    X = (rng.random((900, 19)) < 0.2) / 4.0
    k = next(k for k in range(2, 40) if math.sqrt(k / 16) ** 2 < k / 16)
    eps = math.sqrt(k / 16)
    is_min = rng.random(len(X)) < 0.35
    ri, ci = np.flatnonzero(is_min), np.flatnonzero(~is_min)
    assert fused._exact_sums(X) and not fused._exact_sums(_tied_population(0)[0])
    counts, _ = fused.cross_counts_and_sums(X, ri, ci, eps, False, n_jobs=2)
    want, _ = _direct(X, ri, ci, eps)
    d = geometry.canonical_distances(X, np.repeat(ri, len(ci)), np.tile(ci, len(ri)))
    assert (d == eps).sum() > 1000 and np.array_equal(counts, want)
    squares = ((X[ri][:, None, :] - X[ci][None, :, :]) ** 2).sum(axis=2)  # exact here
    assert not np.array_equal(counts, (squares <= eps * eps).sum(axis=1))


def test_exact_sums_and_the_last_square_within_eps():
    assert not fused._exact_sums(np.array([[0.0], [2.0**27 + 0.5]]))  # squares beyond 2⁵³
    assert fused._exact_sums(np.array([[0.0], [2.0**20 + 0.5]]))
    assert not fused._exact_sums(np.array([[0.0], [0.1]]))
    for eps in np.random.default_rng(0).uniform(0, 3, 200).tolist() + [0.0, 0.5, 1.0]:
        s = fused._last_square_within(eps)
        assert math.sqrt(s) <= eps < math.sqrt(float(np.nextafter(s, math.inf)))
