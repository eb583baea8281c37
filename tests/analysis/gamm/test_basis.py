"""Spline bases against independent constructions: scipy's natural cubic spline for cr, the
integrated squared second derivative for both penalties, the constraint's definition, and
mgcv's own thin-plate columns (fixtures/tp_basis_mgcv.json, from make_basis_fixtures.R)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.interpolate import CubicSpline

from analysis.gamm.basis import (
    BasisError,
    cr_basis,
    householder_null_basis,
    mgcv_qt,
    place_knots,
    tp_basis,
)

RNG = np.random.default_rng(3)
X = np.round(RNG.uniform(0, 6, 400), 2)


def _wiggliness(basis, coef, lo, hi):
    """int f''(x)^2 dx by finite differences on a fine grid."""
    grid = np.linspace(lo, hi, 20001)
    f = basis.design(grid) @ coef
    h = grid[1] - grid[0]
    second = (f[2:] - 2 * f[1:-1] + f[:-2]) / h**2
    return np.trapezoid(second**2, dx=h)


def test_place_knots_matches_mgcv_rule():
    # mgcv: place.knots(1:11, 4) = 1, 4.333, 7.667, 11
    assert place_knots(np.arange(1.0, 12.0), 4) == pytest.approx([1, 13 / 3, 23 / 3, 11])


def test_cr_basis_is_natural_cubic_spline_through_knot_values():
    b = cr_basis(X, k=8)
    values = RNG.normal(size=8)
    grid = np.linspace(b.knots[0], b.knots[-1], 500)
    ours = b.raw_design(grid) @ values
    ref = CubicSpline(b.knots, values, bc_type="natural")(grid)
    assert np.allclose(ours, ref, atol=1e-10)


@pytest.mark.parametrize("make", [cr_basis, tp_basis])
def test_penalty_is_integrated_squared_second_derivative(make):
    b = make(X, k=10)
    coef = RNG.normal(size=b.penalty.shape[0])
    lo, hi = (b.knots[0], b.knots[-1]) if b.kind == "cr" else (X.min(), X.max())
    if b.kind == "tp":
        # a thin-plate spline's energy integrates over the whole line; beyond the data the
        # function is linear (second derivative 0), so the data range suffices
        lo, hi = X.min() - 1e-9, X.max() + 1e-9
    assert coef @ b.penalty @ coef == pytest.approx(_wiggliness(b, coef, lo, hi), rel=2e-3)


@pytest.mark.parametrize("make", [cr_basis, tp_basis])
def test_constraint_and_null_space(make):
    b = make(X, k=10)
    design = b.design(X)
    assert design.shape == (X.size, 9)
    assert np.allclose(design.sum(axis=0), 0.0, atol=1e-8)
    # the unpenalized direction is the centred linear function of x
    vals, vecs = np.linalg.eigh(b.penalty)
    null = vecs[:, np.abs(vals) < vals.max() * 1e-9]
    assert null.shape[1] == 1
    f = design @ null[:, 0]
    assert abs(np.corrcoef(f, X)[0, 1]) > 1 - 1e-9


def test_householder_null_basis():
    c = RNG.normal(size=6)
    z = householder_null_basis(c)
    assert np.allclose(c @ z, 0.0)
    assert np.allclose(z.T @ z, np.eye(5))


def test_too_few_distinct_values():
    with pytest.raises(BasisError, match="distinct values"):
        tp_basis(np.arange(5.0), k=10)
    with pytest.raises(BasisError, match="constant"):
        cr_basis(np.ones(20), k=10)


MGCV_TP = json.loads((Path(__file__).parent / "fixtures" / "tp_basis_mgcv.json").read_text())


@pytest.mark.parametrize("case", ["pure_knot", "dense", "lanczos"])
def test_tp_columns_are_mgcvs_own(case):
    """Not only the span: Wood's smooth test with a fractional rank depends on the columns
    (their order and nesting), so each must equal mgcv's up to its sign."""
    ref = MGCV_TP[case]
    x = np.asarray(ref["x"], dtype=float)
    theirs = np.asarray(ref["X"]).reshape(ref["ncol"], -1).T
    theirs_pen = np.asarray(ref["S"]).reshape(ref["ncol"], ref["ncol"])
    b = tp_basis(x, k=10)
    assert np.unique(x).size == ref["n_unique"]
    ours = b.design(x)
    sign = np.sign(np.sum(ours * theirs, axis=0))
    assert np.allclose(ours * sign, theirs, atol=1e-9 * np.abs(theirs).max())
    # mgcv scales each penalty by a constant (absorbed by the smoothing parameter)
    pen = b.penalty * np.outer(sign, sign)
    ratio = theirs_pen[0, 0] / pen[0, 0]
    assert np.allclose(pen * ratio, theirs_pen, atol=1e-9 * np.abs(theirs_pen).max())


def test_mgcv_qt_reflects_rows_into_the_last_columns():
    a = RNG.normal(size=(2, 6))
    q = mgcv_qt(a)
    assert np.allclose(q.T @ q, np.eye(6))
    t = a @ q
    # A Q = [0, T] with T reverse lower triangular: row i is zero left of column c - i - 1
    assert np.allclose(t[:, :4], 0.0) and abs(t[0, 4]) < 1e-12
    assert abs(t[0, 5]) == pytest.approx(np.linalg.norm(a[0]))
