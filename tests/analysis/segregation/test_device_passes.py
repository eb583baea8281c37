"""The torch backend's rechecks on its device (`device_passes`), run on torch's CPU device:
the device's canonical squared sum is numpy's bit for bit, and the value pass, the minority
counts and the cross pass on coded data full of ties equal numpy's without a canonical
distance computed on the host."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.segregation import backends, epsilon, geometry
from analysis.segregation import passes as pair_passes

torch = pytest.importorskip("torch")
from analysis.segregation import device_passes  # noqa: E402


def _coded(seed: int, n: int = 500, d: int = 6) -> np.ndarray:
    """Quarter-coded items with partners at 0.5·(1 ± k ulp) of a few members."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 5, size=(n, d)) / 4.0
    parts = [X]
    for c in X[:4]:
        u = rng.normal(size=(6, d))
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        k = np.array([0.0, 1, -1, 3, -3, 1e-12 / 2**-52])
        parts.append(c + 0.5 * (1.0 + k[:, None] * 2.0**-52) * u)
    return np.vstack(parts)


def test_device_canonical_distance_is_numpys():
    X = np.vstack([_coded(0), np.random.default_rng(1).normal(size=(200, 6)) * 1e3])
    rng = np.random.default_rng(2)
    i, j = rng.integers(0, len(X), 20_000), rng.integers(0, len(X), 20_000)
    ops = backends.TorchOps(device="cpu")
    Xd = ops.put(X)
    got = device_passes.canonical_squares(ops, Xd, Xd, ops.index(i), ops.index(j))
    assert np.array_equal(np.sqrt(ops.host(got)), geometry.canonical_distances(X, i, j))


def test_torch_passes_recheck_on_the_device(monkeypatch):
    """Value pass (ε), minority counts and cross counts/proximity: numpy's results, with the
    host's canonical distance unavailable to the torch backend's passes."""
    monkeypatch.setattr(epsilon, "_FULL_PAIRS", 100)
    monkeypatch.setattr(epsilon, "_SAMPLE_PAIRS", 2000)
    X = _coded(3)
    is_min = np.random.default_rng(4).random(len(X)) < 0.45
    mi, ma = np.flatnonzero(is_min), np.flatnonzero(~is_min)
    coded = mi[mi < 500]  # the coded members alone: few distance values (the value pass)
    geo = geometry.make_geometry(X)
    numpy_ops = backends.NumpyOps(64, 128)
    want_eps, want_cls = epsilon.find_eps(numpy_ops, geo, coded, 0.2, "distinct", 0)
    lo2, hi2 = 0.2, 1.3  # a wide bracket: several tie classes, thousands of pairs
    want_wide = pair_passes.minority_class_pass(numpy_ops, geo, coded, lo2, hi2)
    want_within = pair_passes.minority_within_counts(numpy_ops, geo, mi, 0.5)
    want_cross = pair_passes.cross_pass(numpy_ops, geo, mi, ma, 0.5, True)

    def host_canonical(*args, **kwargs):
        raise AssertionError("a canonical distance computed on the host")

    monkeypatch.setattr(pair_passes, "canonical_distances", host_canonical)
    ops = backends.TorchOps(device="cpu", block_rows=40, block_cols=96)
    got_eps, got_cls = epsilon.find_eps(ops, geo, coded, 0.2, "distinct", 0)
    assert isinstance(want_cls, pair_passes.Classes) and isinstance(got_cls, pair_passes.Classes)
    assert got_eps == want_eps
    got_wide = pair_passes.minority_class_pass(ops, geo, coded, lo2, hi2)
    assert len(want_wide.values) >= 5 and want_wide.counts.sum() > 5000
    for got, want in ((got_cls, want_cls), (got_wide, want_wide)):
        np.testing.assert_array_equal(got.values, want.values)
        np.testing.assert_array_equal(got.counts, want.counts)
        np.testing.assert_array_equal(got.below, want.below)
    within = pair_passes.minority_within_counts(ops, geo, mi, 0.5)
    np.testing.assert_array_equal(within, want_within)
    cross = pair_passes.cross_pass(ops, geo, mi, ma, 0.5, True)
    np.testing.assert_array_equal(cross[0], want_cross[0])
    assert abs(cross[1] - want_cross[1]) <= 1e-12 * want_cross[1]
