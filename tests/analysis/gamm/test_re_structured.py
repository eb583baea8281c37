"""The random-effect test computed from the block structure (``re_test``, ``spectral``) against
the same quantities from dense eigen-decompositions (numpy/LAPACK, mgcv's own route): the
spectral sums of diag + low rank, Ref.df (rank), the largest eigenvalue and the p-value, on
the committed studies and on simulated ones with more levels than the dense route takes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.gamm import fit_gamm
from analysis.gamm import re_test as rt
from analysis.gamm.chisq import f_ratio_mixture_sf, mixture_sf
from analysis.gamm.linalg import cross_products
from analysis.gamm.spectral import LowRankSpectrum

FIXTURES = Path(__file__).parent / "fixtures"
MODEL = "y ~ s(x) + s(uid, bs = 're') + s(uid, x, bs = 're')"


def _symmetric_case(q: int, seed: int, with_small: bool) -> tuple[np.ndarray, ...]:
    """diag(delta) + W S W' (symmetric, indefinite S) and its eigenvalues."""
    rng = np.random.default_rng(seed)
    delta = rng.uniform(0.05, 1.0, q)
    if with_small:
        delta[:7] = [0.0, 1e-9, -1e-7, -0.3, -0.02, 2e-5, 3.5]
    w = rng.normal(0, 1 / np.sqrt(q), (q, 6))
    s = np.diag([2.0, -1.5, 0.7, 0.1, -0.05, 4.0])
    dense = np.diag(delta) + w @ s @ w.T
    return delta, w @ s, w, np.linalg.eigvalsh(dense)


@pytest.mark.parametrize("with_small", [False, True])
def test_spectral_sums_equal_eigenvalue_sums(with_small):
    delta, a, b, ev = _symmetric_case(400, 3, with_small)
    spec = LowRankSpectrum(delta, a, b)
    u = np.concatenate([np.linspace(0, 5, 301), np.geomspace(5, 2e4, 200)])
    rng = np.random.default_rng(0)
    for order in (np.arange(u.size), rng.permutation(u.size)):  # any order of nodes
        atan_sum, log_sum = spec.imhof_spectrum(u[order])
        au = np.multiply.outer(u[order], ev)
        np.testing.assert_allclose(atan_sum, np.arctan(au).sum(axis=1), rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(log_sum, np.log1p(au**2).sum(axis=1), rtol=1e-9, atol=1e-9)
    t = 0.4 / np.max(np.abs(ev))
    assert spec.log_det_real(t) == pytest.approx(np.sum(np.log1p(-t * ev)), rel=1e-10)
    assert spec.log_det_real(1.01 / np.max(ev)) == np.inf


def _pieces(fit):
    design, state = fit.design, fit.state
    cp = cross_products(design)
    lam = np.exp(state.rho)
    for t in design.terms:
        if t.kind == "random":
            yield t.label, rt.re_problem(design, t, cp, state.fac, lam, state.beta_r, fit.scale)


def _simulated(q: int, slope_sd: float, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    per = 5
    uid = np.repeat([f"u{i:05d}" for i in range(q)], per)
    n = uid.size
    x = np.round(rng.uniform(0, 4, n), 2)
    b0 = np.repeat(rng.normal(0, 1.0, q), per)
    b1 = np.repeat(rng.normal(0, slope_sd, q), per)
    y = 4.5 - 1.2 * np.minimum(x, 1.5) + b0 + b1 * x + rng.normal(0, 1.0, n)
    return pd.DataFrame({"uid": uid, "x": x, "y": y})


@pytest.fixture(scope="module")
def null_study():
    data = pd.read_csv(FIXTURES / "study_null.csv", dtype={"participant": str})
    return fit_gamm(data, "acceptance", "sparsity", "participant")


@pytest.fixture(scope="module")
def weak_slope():
    """1,200 participants (above the dense route's 1,000), a random slope of SD 0.05 whose
    test has a p-value far from 0 and 1."""
    return fit_gamm(MODEL, _simulated(1200, 0.05))


@pytest.mark.parametrize("study", ["null_study", "weak_slope"])
def test_structured_pieces_equal_dense(study, request):
    fit = request.getfixturevalue(study)
    moderate = 0
    for label, prob in _pieces(fit):
        ev = rt.dense_weights(prob)
        top = rt.max_eigenvalue(prob)
        assert top == pytest.approx(ev.max(), rel=1e-8), label
        clipped = np.where(ev < 0, 0.0, ev)
        rank = int(np.sum(clipped > clipped.max() * rt.RANK_TOL))
        assert prob.q - rt.count_below(prob, top * rt.RANK_TOL) == rank, label
        for frac in (0.01, 0.3, 1.0001):  # the count at any threshold, not only the rank's
            assert rt.count_below(prob, frac * top) == int(np.sum(ev < frac * top)), label
        p_dense = f_ratio_mixture_sf(prob.stat, clipped[clipped > 0], fit.residual_df)
        p_known = mixture_sf(prob.stat, clipped[clipped > 0])
        if p_dense > 1e-9:
            moderate += 1
            assert rt.structured_sf(prob, top, fit.residual_df, False) == pytest.approx(
                p_dense, rel=1e-6
            ), label
        if p_known > 1e-9:
            assert rt.structured_sf(prob, top, fit.residual_df, True) == pytest.approx(
                p_known, rel=1e-6
            ), label
    assert moderate >= 1  # each study has a term whose p-value is not negligible


def test_summary_structured_equals_dense_route(weak_slope, monkeypatch):
    """The whole summary with the structured route (1,200 levels) and with the dense route
    forced: same Ref.df, F and p."""
    monkeypatch.setattr(rt, "DENSE_MAX_LEVELS", 10**6)
    dense = fit_gamm(MODEL, _simulated(1200, 0.05))
    for label, row in weak_slope.smooth.items():
        other = dense.smooth[label]
        assert row.ref_df == other.ref_df, label
        assert pytest.approx(other.F, rel=1e-9) == row.F, label
        if other.p > 1e-10:
            assert row.p == pytest.approx(other.p, rel=1e-6), label
        else:  # the structured route reports a Chernoff bound there: above the exact p
            assert other.p <= row.p < rt.RE_BOUND_CUTOFF, label
    assert 0.01 < weak_slope.smooth["s(uid,x)"].p < 0.99


def test_many_levels_need_no_q_by_q_matrix(monkeypatch):
    """20,000 participants: the test of both terms never calls the dense route."""
    monkeypatch.setattr(rt, "dense_weights", lambda prob: pytest.fail("dense route used"))
    fit = fit_gamm(MODEL, _simulated(20000, 0.0, seed=5))
    assert fit.smooth["s(uid)"].ref_df == 19999
    assert fit.smooth["s(uid)"].p < 1e-10
    assert 0.0 < fit.smooth["s(uid,x)"].p <= 1.0
