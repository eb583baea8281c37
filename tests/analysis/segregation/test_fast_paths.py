"""The fast kernels of the pair passes (issue 35, item 3) against the direct slow formulas:
numpy's vectorised float64 exp, torch's exp, the torch backend (the GPU's code, run on the
CPU), the numba backend's compiled cross pass (`fused`), on random data with exact ties at ε and partners a few ulps either side of it; and
every pair formed once per pass."""

from __future__ import annotations

import functools
import threading

import numpy as np
import pytest

from analysis.segregation import backends, epsilon, geometry, indices
from analysis.segregation.indices import segregation_indices

from . import slow_reference as ref


def _population(seed: int, kind: str) -> tuple[np.ndarray, np.ndarray, float]:
    """A population, its groups and an ε with pairs exactly at it and just beside it.

    `coded`: quarters on 6 items (thousands of pairs exactly at ε = 0.5), plus partners of
    a few members at 0.5·(1 + δ) for δ = 0, ±1 and ±3 ulp, ±1e-12 and ±1e-7.
    `continuous`: normal data, ε = the canonical distance of one minority × majority pair
    (not a round number), with a duplicate of a member (distance 0: the sqrt rule)."""
    rng = np.random.default_rng(seed)
    if kind == "coded":
        X = rng.integers(0, 5, size=(110, 6)) / 4.0
        deltas = np.array([0.0, 1, -1, 3, -3, 1e-12 / 2**-52, -1e-12 / 2**-52, 1e-7 / 2**-52])
        parts = [X]
        for c in X[:4]:
            u = rng.normal(size=(len(deltas), 6))
            u /= np.linalg.norm(u, axis=1, keepdims=True)
            parts.append(c + 0.5 * (1.0 + deltas[:, None] * 2.0**-52) * u)
        X = np.vstack(parts)
        eps = 0.5
    else:
        X = rng.normal(size=(130, 5)) * rng.uniform(0.3, 1.5, size=5)
        X = np.vstack([X, X[:2]])
        eps = -1.0
    g = np.where(rng.random(len(X)) < 0.4, "f", "m")
    g[:3] = "f"
    g[3] = "m"
    if eps < 0:
        eps = ref.dist(X[0], X[3])
    return X, g, eps


def _small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of 16 × 64 (ragged edges, several row blocks in two threads)."""
    orig = backends.NumpyOps.__init__

    def small(self, block_rows=16, block_cols=64, n_jobs=2):
        orig(self, block_rows, block_cols, n_jobs)

    monkeypatch.setattr(backends.NumpyOps, "__init__", small)


KERNELS = ["numpy-exp", "torch-exp", "torch-backend", "numba-backend"]


def _use(monkeypatch: pytest.MonkeyPatch, kernel: str) -> dict[str, str]:
    """Select a kernel; returns segregation_indices' backend arguments for it."""
    _small_blocks(monkeypatch)
    monkeypatch.setattr(backends, "_TORCH_PAIRS", 0)  # every pass counts as large
    if kernel == "numpy-exp":
        monkeypatch.setattr(backends, "NUMPY_EXP", True)
        return {}
    if kernel == "numba-backend":
        pytest.importorskip("numba")
        monkeypatch.setattr(backends, "_NUMBA_PAIRS", 0)  # the kernel on every cross pass
        return {"backend": "numba"}
    pytest.importorskip("torch")
    if kernel == "torch-exp":
        monkeypatch.setattr(backends, "NUMPY_EXP", False)
        monkeypatch.setattr(backends, "_TORCH_MIN_BLOCK", 1)
        return {}
    return {"backend": "torch", "device": "cpu"}


@functools.cache
def _reference(kind: str) -> dict[str, float]:
    """The slow formulas' values for `_population(3, kind)` (computed once per kind)."""
    X, g, eps = _population(3, kind)
    is_min = ref.minority_mask(g)
    mi = np.flatnonzero(is_min)
    e = ref.eps(X, is_min)
    return {
        "on_eps": sum(ref.dist(X[i], X[j]) == eps for i in mi for j in range(len(X))),
        "centralization_given": ref.centralization(X, is_min, eps),
        "avg_proximity": ref.avg_proximity(X, is_min),
        "eps": e,
        "centralization": ref.centralization(X, is_min, e),
    }


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("kind", ["coded", "continuous"])
def test_fast_kernels_equal_the_direct_formulas(monkeypatch, kernel, kind):
    """Centralization exactly (given ε on the ties, and ε found), average proximity within
    the documented bound: each pair's distance off by at most 5·tol, a few ulps for exp."""
    options = _use(monkeypatch, kernel)
    X, g, eps = _population(3, kind)
    want = _reference(kind)
    tol = geometry.make_geometry(X).tol
    assert want["on_eps"] >= 2  # pairs exactly at ε: `≤ ε` decides them
    given = segregation_indices(X, g, eps=eps, units=np.arange(len(X)) % 4, **options)
    assert given.centralization == want["centralization_given"]
    assert abs(given.avg_proximity - want["avg_proximity"]) <= 5 * tol + 1e-14
    found = segregation_indices(X, g, want=("centralization",), **options)
    assert found.eps == want["eps"]
    assert found.centralization == want["centralization"]


def test_numpy_exp_keeps_torch_unloaded(monkeypatch):
    """Where numpy's float64 exp is vectorised (AVX-512) a large pass runs on numpy's
    kernels and never imports torch; elsewhere it loads torch's."""
    monkeypatch.setattr(backends, "NUMPY_EXP", True)
    ops = backends.NumpyOps()
    ops.prepare(10**12)
    assert ops.torch is None
    pytest.importorskip("torch")
    monkeypatch.setattr(backends, "NUMPY_EXP", False)
    ops = backends.NumpyOps()
    ops.prepare(10**12)
    assert ops.torch is not None


class _CountingOps(backends.NumpyOps):
    """NumpyOps that add up the pairs each block product forms."""

    def __init__(self) -> None:
        super().__init__(block_rows=16, block_cols=64, n_jobs=2)
        self.formed = 0
        self._lock = threading.Lock()

    def _add(self, a: np.ndarray, b: np.ndarray) -> None:
        with self._lock:
            self.formed += a.shape[0] * b.shape[0]

    def gemm(self, a, b):
        self._add(a, b)
        return super().gemm(a, b)

    def gemm32(self, a, b):
        self._add(a, b)
        return super().gemm32(a, b)


@pytest.mark.parametrize("path", ["all-pairs ε", "sampled bracket"])
def test_each_pair_is_formed_once(monkeypatch, path):
    """The whole catalogue forms the minority triangle once (ε and the minority counts
    together) and each minority × majority pair once (counts and proximity together)."""
    if path == "sampled bracket":
        monkeypatch.setattr(epsilon, "_FULL_PAIRS", 100)
        monkeypatch.setattr(epsilon, "_SAMPLE_PAIRS", 2000)
    X = np.random.default_rng(5).random((300, 4))
    g = np.where(np.arange(300) < 110, "f", "m")
    ops = _CountingOps()
    monkeypatch.setattr(indices, "make_ops", lambda *a, **k: ops)
    r = segregation_indices(X, g, units=np.arange(300) % 3)
    m, big = 110, 190
    # float32 minority blocks of 32 rows (`single_blocks`), each row block to the end
    triangle = sum(min(32, m - r0) * (m - r0) for r0 in range(0, m, 32))
    assert ops.formed == triangle + m * big
    is_min = ref.minority_mask(g)
    assert r.centralization == ref.centralization(X, is_min, ref.eps(X, is_min))
