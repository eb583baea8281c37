"""The float32 screening of the pair passes (`screen`) returns exactly the float64 counts:
adversarial populations with ties at exactly ε and distances a few ulps either side of it,
against the float64 route (the GPU's, and the passes as they were) and a direct slow count."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analysis.segregation import backends, epsilon, geometry, screen
from analysis.segregation import passes as pair_passes
from analysis.segregation.indices import segregation_indices

from . import slow_reference as ref


def _shells(seed: int, d: int, eps: float, centres: int, far: float = 0.0) -> np.ndarray:
    """Grid points (coordinates in quarters: exact ties at ε = 0.5) and, around each of a
    few centres, partners at ε·(1 + δ) for δ from ±1 ulp to ±10⁻⁴ (both sides of ε, inside
    and outside the float32 margin); `far` adds two outliers at that distance (wide margin)."""
    rng = np.random.default_rng(seed)
    grid = rng.integers(0, 5, size=(60, d)) / 4.0
    deltas = [k * 2.0**-52 for k in (-3, -1, 0, 1, 3)]
    deltas += [s * t for t in (1e-12, 1e-9, 1e-7, 3e-6, 1e-4) for s in (-1.0, 1.0)]
    pts = [grid]
    for c in grid[rng.choice(len(grid), size=centres, replace=False)]:  # grid[k] then X[60:]
        u = rng.normal(size=(len(deltas), d))
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        pts.append(c + eps * (1.0 + np.array(deltas))[:, None] * u)
    X = np.vstack(pts)
    if far:
        X = np.vstack([X, np.full((1, d), far), np.full((1, d), -far)])
    return X


def _direct_counts(X: np.ndarray, rows: np.ndarray, cols: np.ndarray, eps: float) -> np.ndarray:
    """Per row, the columns (other than itself) within ε: one canonical distance at a time."""
    return np.array([sum(ref.dist(X[i], X[j]) <= eps for j in cols if j != i) for i in rows])


def _ops(single: bool, kind: str = "numpy") -> object:
    ops = (
        backends.NumpyOps(block_rows=8, block_cols=24, n_jobs=2)
        if kind == "numpy"
        else backends.TorchOps(device="cpu", block_rows=8, block_cols=24)
    )
    ops.single = single
    return ops


@pytest.mark.parametrize("eps", [0.5, "pair", math.sqrt(2) / 4])
@pytest.mark.parametrize("d", [3, 7])
def test_counts_at_and_near_eps_equal_float64_and_direct(eps, d):
    X = _shells(d, d, 0.5, centres=6)
    if eps == "pair":  # a centre–partner distance ε·(1 − 3 ulp): not a round number
        centre = int(np.argmin(np.abs(np.linalg.norm(X[:60] - X[60], axis=1) - 0.5)))
        eps = ref.dist(X[centre], X[60])
    rng = np.random.default_rng(d)
    is_min = rng.random(len(X)) < 0.45
    mi, ma = np.flatnonzero(is_min), np.flatnonzero(~is_min)
    geo = geometry.make_geometry(X)
    lo2, hi2 = geo.band(eps)
    assert screen.operands(_ops(True), geo, mi, mi, [lo2, hi2]).single
    near = [
        (i, j)
        for i in mi
        for j in range(len(X))
        if j != i and abs(ref.dist(X[i], X[j]) ** 2 - eps**2) <= screen.float32_margin(geo)
    ]
    if eps != math.sqrt(2) / 4:  # the shells sit at 0.5: the float64 recheck is exercised
        assert len(near) > 20
    want_min = _direct_counts(X, mi, mi, eps)
    want_cross = _direct_counts(X, mi, ma, eps)
    for ops in (_ops(True), _ops(False), _ops(False, "torch")):
        within = pair_passes.minority_within_counts(ops, geo, mi, eps)
        np.testing.assert_array_equal(within, want_min)
        for proximity in (False, True):
            cross, _ = pair_passes.cross_pass(ops, geo, mi, ma, eps, proximity)
            np.testing.assert_array_equal(cross, want_cross)


@pytest.mark.parametrize("passes", ["values", "pairs"])
def test_eps_bracket_in_float32_equals_the_direct_quantile(monkeypatch, passes):
    """The sampled-bracket path with the bracket pass screened in float32: the same exact
    order statistic and the same minority counts from the bracket."""
    monkeypatch.setattr(epsilon, "_FULL_PAIRS", 100)
    monkeypatch.setattr(epsilon, "_SAMPLE_PAIRS", 400)
    if passes == "pairs":
        monkeypatch.setattr(epsilon, "_MAX_CLASSES_ON", False)
    X = _shells(5, 4, 0.5, centres=5)
    is_min = np.random.default_rng(1).random(len(X)) < 0.5
    mi = np.flatnonzero(is_min)
    geo = geometry.make_geometry(X)
    for q in (0.02, 0.2, 0.5):
        want = ref.eps(X, is_min, q)
        for single in (True, False):
            e, bracket = epsilon.find_eps(_ops(single), geo, mi, q, "distinct", 0)
            assert e == pytest.approx(want, abs=1e-12)
            if bracket is not None:
                got = pair_passes.counts_from_bracket(geo, mi, bracket, e)
                if got is not None:
                    np.testing.assert_array_equal(got, _direct_counts(X, mi, mi, e))


def test_far_outliers_widen_the_margin_and_fall_back_to_float64():
    X = _shells(2, 5, 0.5, centres=4, far=3e4)
    is_min = np.zeros(len(X), dtype=bool)
    is_min[::2] = True
    mi, ma = np.flatnonzero(is_min), np.flatnonzero(~is_min)
    geo = geometry.make_geometry(X)
    assert not screen.operands(_ops(True), geo, mi, mi, list(geo.band(0.5))).single
    cross, _ = pair_passes.cross_pass(_ops(True), geo, mi, ma, 0.5, False)
    np.testing.assert_array_equal(cross, _direct_counts(X, mi, ma, 0.5))


@pytest.mark.parametrize("shift,scale", [(0.0, 1.0), (1e3, 1.0), (0.0, 1e-3), (-50.0, 20.0)])
def test_the_float32_margin_bounds_every_pair(shift, scale):
    """|s32 − c²| stays within the margin on every pair (uncentred, tiny and wide data)."""
    rng = np.random.default_rng(abs(int(shift)) + 7)
    X = shift + scale * rng.normal(size=(300, 19)) * rng.uniform(0.1, 3.0, size=19)
    geo = geometry.make_geometry(X)
    idx = np.arange(len(X))
    op = screen.Operands(
        None, None, geo.A, geo.B, screen._single(geo.A, True), screen._single(geo.B)
    )
    s32 = (op.A32 @ op.B32.T).astype(np.float64)
    i, j = np.triu_indices(len(X), 1)
    c2 = geometry.canonical_distances(X, idx[i], idx[j]) ** 2
    assert np.max(np.abs(s32[i, j] - c2)) <= screen.float32_margin(geo)


@pytest.mark.parametrize("x", [0.3, 1.0, 2.0 / 3.0, 1e-30, -0.7, 123456.789])
def test_float32_thresholds_round_outward(x):
    lo, hi = screen.below_f32(x), screen.above_f32(x)
    assert float(lo) <= x <= float(hi)
    assert float(np.nextafter(lo, np.float32(np.inf))) > x or float(lo) == x
    assert float(np.nextafter(hi, np.float32(-np.inf))) < x or float(hi) == x


def test_indices_equal_with_and_without_float32(monkeypatch):
    """The whole catalogue through the public function: float32 screening on and off."""
    X = _shells(9, 6, 0.5, centres=5)
    g = np.where(np.random.default_rng(4).random(len(X)) < 0.4, "a", "b")
    units = np.arange(len(X)) % 5
    on = segregation_indices(X, g, units=units, eps=0.5).to_json()
    monkeypatch.setattr(backends.NumpyOps, "single", False)
    off = segregation_indices(X, g, units=units, eps=0.5).to_json()
    assert on == off
    is_min = g == "a"
    assert on["centralization"] == pytest.approx(ref.centralization(X, is_min, 0.5), abs=1e-12)


def test_auto_backend_takes_the_gpu_when_present(monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(backends, "gpu_available", lambda: False)
    assert isinstance(backends.make_ops("auto"), backends.NumpyOps)
    monkeypatch.setattr(backends, "gpu_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    ops = backends.make_ops("auto")
    assert isinstance(ops, backends.TorchOps) and ops.device.type == "cuda"
    assert not ops.single  # a GPU's float32 products may be TF32: float64 there
    assert isinstance(backends.make_ops("auto", device="cpu"), backends.NumpyOps)
