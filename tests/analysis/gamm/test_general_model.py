"""The general entry point (several smooths, crossed random effects) against direct dense
formulas: penalized least squares, the REML criterion and its optimum, and EDFs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.gamm import RandomEffect, Smooth, fit_additive_mixed


@pytest.fixture(scope="module")
def model():
    rng = np.random.default_rng(11)
    n_part, n_item = 40, 12
    part = np.repeat(np.arange(n_part), 6)
    item = rng.integers(0, n_item, part.size)
    x1 = rng.uniform(0, 5, part.size).round(2)
    x2 = rng.uniform(-1, 1, part.size).round(2)
    y = (
        np.sin(x1)
        + x2**2
        + rng.normal(0, 0.8, n_part)[part]
        + rng.normal(0, 0.5, n_item)[item]
        + rng.normal(0, 0.3, n_part)[part] * x1
        + rng.normal(0, 0.7, part.size)
    )
    data = pd.DataFrame(
        {"y": y, "x1": x1, "x2": x2, "pid": part.astype(str), "item": item.astype(str)}
    )
    fit = fit_additive_mixed(
        data,
        "y",
        [Smooth("x1"), Smooth("x2", basis="cr", k=8)],
        [RandomEffect("pid"), RandomEffect("pid", "x1"), RandomEffect("item")],
    )
    return data, fit


def _dense(fit):
    """Full model matrix, penalties and index sets built from the fitted terms."""
    d = fit.design
    cols, _pens, blocks = [d.xf], [], []
    n = d.n
    pf = d.p_fixed
    start = pf
    for t in d.terms:
        if t.random_index is not None:
            z = np.zeros((n, d.n_groups))
            z[np.arange(n), d.group_codes] = d.random_cov[:, t.random_index]
            cols.append(z)
            blocks.append((t, np.arange(start, start + d.n_groups), np.eye(d.n_groups)))
            start += d.n_groups
        elif t.penalty is not None:
            idx = np.arange(t.fixed_slice.start, t.fixed_slice.stop)
            blocks.append((t, idx, t.penalty))
    x = np.hstack(cols)
    return x, blocks


def _reml(x, y, blocks, rho):
    p = x.shape[1]
    s = np.zeros((p, p))
    logdet_s = 0.0
    for (_t, idx, pen), r in zip(blocks, rho, strict=True):
        s[np.ix_(idx, idx)] += np.exp(r) * pen
        ev = np.linalg.eigvalsh(pen)
        ev = ev[ev > ev.max() * 1e-10]
        logdet_s += np.sum(np.log(np.exp(r) * ev))
    h = x.T @ x + s
    beta = np.linalg.solve(h, x.T @ y)
    dev = np.sum((y - x @ beta) ** 2) + beta @ s @ beta
    mp = p - sum(np.linalg.matrix_rank(pen) for _, _, pen in blocks)
    n = y.size
    phi = dev / (n - mp)
    value = (
        dev / (2 * phi)
        + (n - mp) / 2 * np.log(2 * np.pi * phi)
        - logdet_s / 2
        + np.linalg.slogdet(h)[1] / 2
    )
    return value, beta, h, s


def _rho(fit, blocks):
    return np.log([fit.sp[t.label] for t, _, _ in blocks])


def test_fitted_values_are_penalized_least_squares(model):
    data, fit = model
    x, blocks = _dense(fit)
    _, beta, _, _ = _reml(x, fit.design.y, blocks, _rho(fit, blocks))
    assert np.allclose(x @ beta, fit.fitted, atol=1e-8)
    assert np.allclose(fit.predict(data), fit.fitted, atol=1e-8)


def test_reml_optimum(model):
    _, fit = model
    x, blocks = _dense(fit)
    rho = _rho(fit, blocks)
    base = _reml(x, fit.design.y, blocks, rho)[0]
    for j in range(rho.size):
        for step in (-0.05, 0.05):
            r = rho.copy()
            r[j] += step
            assert _reml(x, fit.design.y, blocks, r)[0] >= base - 1e-7


def test_edfs_are_traces_of_the_influence_matrix(model):
    _, fit = model
    x, blocks = _dense(fit)
    _, _, h, _ = _reml(x, fit.design.y, blocks, _rho(fit, blocks))
    f = np.linalg.solve(h, x.T @ x)
    for t, idx, _ in blocks:
        assert fit.edf[t.label] == pytest.approx(np.trace(f[np.ix_(idx, idx)]), rel=1e-6)
    assert set(fit.smooth) == {"s(x1)", "s(x2)", "s(pid)", "s(pid,x1)", "s(item)"}
    assert fit.converged
