"""EBR: the rejection sampler against the closed-form product of Gaussians, beta, the
closest-approved-sample rule by brute force, and the pool strategy `ebr:k`."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import multivariate_normal
from sklearn.mixture import GaussianMixture

from recourse_engine import carloan_schema, parse_design, pool_from_frame, synth_pool
from recourse_engine.distances import CHANGE_TOL
from recourse_engine.encoding import normalise
from recourse_engine.methods import EBR, MethodError
from recourse_engine.methods.ebr import (
    GroupDensity,
    attach_pool_density,
    fit_group_density,
    fit_pool_density,
)
from recourse_engine.selection import PoolIndex


def _gmm(weights, means, covs):
    """A GaussianMixture with the given parameters (no fitting)."""
    g = GaussianMixture(len(weights), covariance_type="full")
    g.weights_ = np.asarray(weights, float)
    g.means_ = np.asarray(means, float)
    g.covariances_ = np.asarray(covs, float)
    g.precisions_cholesky_ = np.array([np.linalg.cholesky(np.linalg.inv(c)) for c in covs])
    return g


def _product_moments(w0, m0, c0, w1, m1, c1):
    """Closed form: N(a, A) N(b, B) = N(a; b, A + B) N(c, C), C = (A^-1 + B^-1)^-1,
    c = C (A^-1 a + B^-1 b); a product of mixtures is the mixture of pairwise products."""
    ws, mus, covs = [], [], []
    for wa, a, A in zip(w0, m0, c0, strict=True):
        for wb, b, B in zip(w1, m1, c1, strict=True):
            C = np.linalg.inv(np.linalg.inv(A) + np.linalg.inv(B))
            ws.append(wa * wb * multivariate_normal(b, A + B).pdf(a))
            mus.append(C @ (np.linalg.solve(A, a) + np.linalg.solve(B, b)))
            covs.append(C)
    ws = np.array(ws) / np.sum(ws)
    mean = sum(w * m for w, m in zip(ws, mus, strict=True))
    cov = sum(w * (C + np.outer(m - mean, m - mean)) for w, m, C in zip(ws, mus, covs, strict=True))
    return mean, cov


@pytest.mark.parametrize(
    "p0, p1",
    [
        (
            ([1.0], [[0.3, 0.6]], [np.diag([0.02, 0.01])]),
            ([1.0], [[0.5, 0.4]], [[[0.03, 0.01], [0.01, 0.02]]]),
        ),
        (
            ([0.6, 0.4], [[0.2, 0.2], [0.7, 0.8]], [np.eye(2) * 0.02, np.eye(2) * 0.01]),
            ([0.5, 0.5], [[0.4, 0.3], [0.6, 0.7]], [np.eye(2) * 0.03, np.eye(2) * 0.02]),
        ),
    ],
)
def test_rejection_sampler_draws_the_normalised_product(p0, p1):
    dens = GroupDensity((_gmm(*p0), _gmm(*p1)), "gmm")
    draws = dens.sample_product(6000, np.random.default_rng(0))
    assert len(draws) == 6000
    mean, cov = _product_moments(*p0, *p1)
    se = np.sqrt(np.diag(cov) / len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 5 * se)
    assert np.allclose(np.cov(draws.T), cov, rtol=0.15, atol=2e-4)


def test_density_bound_is_an_upper_bound():
    g = _gmm([0.3, 0.7], [[0.2, 0.2], [0.25, 0.3]], [np.eye(2) * 0.01, np.eye(2) * 0.004])
    dens = GroupDensity((g, g), "gmm")
    grid = np.stack(np.meshgrid(np.linspace(0, 0.5, 201), np.linspace(0, 0.5, 201)), -1)
    peak = g.score_samples(grid.reshape(-1, 2)).max()
    assert dens._log_bound(g) >= peak


def test_kde_density_samples_and_bounds():
    rng = np.random.default_rng(1)
    x = np.vstack([rng.normal(0.4, 0.05, (100, 2)), rng.normal(0.5, 0.05, (100, 2))])
    g = np.repeat([0, 1], 100)
    dens = fit_group_density(x, g, kind="kde", bandwidth=0.05)
    draws = dens.sample_product(500, rng)
    assert len(draws) == 500
    # the product concentrates between the groups
    assert 0.4 < draws.mean() < 0.5
    with pytest.raises(MethodError, match="unknown density"):
        fit_group_density(x, g, kind="flow")


def test_ebr_returns_the_closest_approved_sample_above_beta(synth):
    data, model = synth
    x = data.codes[~model.approves(data.codes)][::10]
    method = EBR(seed=0, n_samples=800, beta_quantile=0.5).fit(data, model)
    res = method.get_counterfactuals(x)
    assert res.valid.all()
    samples = method.samples_
    logp = method.group_density_.log_product(samples)
    # the kept samples are the upper half of the drawn ones by product density
    assert len(samples) >= 380
    z = normalise(data.schema, x)
    approved = {
        sex: model.approves(np.column_stack([samples, np.full(len(samples), sex)]))
        for sex in (1.0, 2.0)
    }
    for i in range(len(x)):
        best, best_d = None, np.inf
        for s, ok in zip(samples, approved[x[i, 2]], strict=True):  # every kept sample
            if not ok:
                continue
            cand = np.array([s[0], s[1], x[i, 2]])
            d = np.hypot(s[0] - z[i, 0], s[1] - z[i, 1])
            if d < best_d:
                best, best_d = cand, d
        assert np.allclose(res.counterfactuals[i], best)
    assert np.isfinite(logp).all()


def test_absolute_beta_filters_by_product_density(synth):
    data, model = synth
    loose = EBR(seed=0, n_samples=500, beta=0.0).fit(data, model)
    dens = np.exp(loose.group_density_.log_product(loose.samples_))
    beta = float(np.median(dens))
    strict = EBR(seed=0, n_samples=500, beta=beta).fit(data, model)
    assert (np.exp(strict.group_density_.log_product(strict.samples_)) >= beta).all()
    assert len(strict.samples_) < len(loose.samples_)
    with pytest.raises(MethodError, match="beta"):
        EBR(beta=-1.0).fit(data, model)
    with pytest.raises(MethodError, match="beta_quantile"):
        EBR(beta_quantile=1.5).fit(data, model)


@pytest.fixture(scope="module")
def carloan_pool():
    schema = carloan_schema()
    frame = synth_pool(schema, n=1500, seed=4)
    return schema, pool_from_frame(frame, schema)


def test_pool_strategy_picks_the_closest_balanced_admissible_profile(carloan_pool):
    schema, pool = carloan_pool
    design = parse_design("ebr:1,random:1")
    assert design.parts[0].strategy == "ebr"
    density = fit_pool_density(schema, pool, beta_quantile=0.6)
    attach_pool_density(pool, density)
    index = PoolIndex(schema, pool)
    checked = 0
    for i in range(0, 60, 3):
        x, inc = pool.codes[i], float(pool.income[i])
        sel = index.select(x, inc, design, seed=i)
        # brute force: every pool row, admissible by the definition, above the threshold
        best = np.inf
        for r in range(len(pool)):
            c = pool.codes[r]
            if pool.income[r] * 3 < inc * 4 or np.all(np.abs(c - x) <= CHANGE_TOL):
                continue
            if any(
                (it.constraint == "up" and c[j] < x[j])
                or (it.constraint == "down" and c[j] > x[j])
                or (it.constraint == "fixed" and c[j] != x[j])
                for j, it in enumerate(schema.items)
            ):
                continue
            if density.scores[r] < density.threshold:
                continue
            prox = sum(
                abs(c[j] - x[j]) / it.span if it.is_graded else float(c[j] != x[j])
                for j, it in enumerate(schema.items)
            )
            best = min(best, prox)
        ebr_picks = [p for p in sel.picks if p.strategy == "ebr"]
        if np.isfinite(best):
            assert len(ebr_picks) == 1
            assert density.scores[ebr_picks[0].pool_index] >= density.threshold
            assert ebr_picks[0].proximity == pytest.approx(best, abs=1e-9)
            checked += 1
        else:
            assert ebr_picks == [] and sel.shortfall_by_part.get("ebr") == 1
    assert checked >= 5


def test_pool_density_needs_a_group(carloan_pool):
    schema, pool = carloan_pool
    with pytest.raises(MethodError, match="no group column 'sex'"):
        fit_pool_density(schema, pool, group_column="sex")
    bare = pool_from_frame(pd.DataFrame(pool.to_frame(schema)).drop(columns="gender"), schema)
    with pytest.raises(MethodError, match="gender"):
        PoolIndex(schema, bare).select(bare.codes[0], float(bare.income[0]), "ebr:1")
