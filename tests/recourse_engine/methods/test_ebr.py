"""EBR: the conditional densities against the joint / marginal computed independently, both
samplers against the closed-form product of conditional Gaussians, beta, the
closest-approved-sample rule by brute force (with and without an immutable). The pool
strategy `ebr:k` is tested in test_ebr_pool.py."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import multivariate_normal
from sklearn.mixture import GaussianMixture
from sklearn.neighbors import KernelDensity

from recourse_engine.datasets import Dataset
from recourse_engine.distances import CHANGE_TOL
from recourse_engine.encoding import normalise
from recourse_engine.methods import EBR, MethodError
from recourse_engine.methods.ebr.densities import (
    ConditionalGMM,
    GaussianMix,
    GroupDensity,
    fit_group_density,
)
from recourse_engine.schema import load_schema

from .conftest import logistic

# ---------------------------------------------------------------------------------------
# independent references


def _mix_logpdf(x, weights, means, covs):
    """log of a Gaussian mixture's density, with scipy."""
    parts = [
        np.log(w) + multivariate_normal(m, c).logpdf(x)
        for w, m, c in zip(weights, means, covs, strict=True)
    ]
    return logsumexp(np.column_stack(parts), axis=1)


def _condition(weights, means, covs, df, xc):
    """Each joint component conditioned on x_c (textbook Gaussian conditioning), with the
    weights reweighted by the marginal density of x_c."""
    ws, mus, cs = [], [], []
    for w, m, c in zip(weights, means, covs, strict=True):
        m, c = np.asarray(m, float), np.asarray(c, float)
        s_cc_inv = np.linalg.inv(c[df:, df:])
        mus.append(m[:df] + c[:df, df:] @ s_cc_inv @ (xc - m[df:]))
        cs.append(c[:df, :df] - c[:df, df:] @ s_cc_inv @ c[df:, :df])
        ws.append(w * multivariate_normal(m[df:], c[df:, df:]).pdf(xc))
    return np.array(ws) / np.sum(ws), mus, cs


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


# joint mixtures over (x_f1, x_f2, x_c): x_f depends on x_c, differently per group
JOINT0 = (
    [0.6, 0.4],
    [[0.3, 0.5, 0.4], [0.6, 0.3, 0.7]],
    [
        [[0.020, 0.004, 0.010], [0.004, 0.015, -0.003], [0.010, -0.003, 0.030]],
        [[0.015, 0.000, 0.006], [0.000, 0.020, 0.004], [0.006, 0.004, 0.020]],
    ],
)
JOINT1 = (
    [0.5, 0.5],
    [[0.4, 0.4, 0.5], [0.5, 0.6, 0.3]],
    [
        [[0.030, 0.006, -0.008], [0.006, 0.020, 0.005], [-0.008, 0.005, 0.025]],
        [[0.020, -0.004, 0.004], [-0.004, 0.025, 0.008], [0.004, 0.008, 0.030]],
    ],
)


def _cond_gmm(joint, df=2):
    return ConditionalGMM.from_joint(*(np.asarray(a, float) for a in joint), df=df)


# ---------------------------------------------------------------------------------------
# conditional densities


def test_conditional_mixture_density_is_joint_minus_marginal():
    rng = np.random.default_rng(0)
    xf = rng.uniform(0, 1, (50, 2))
    for xc in (np.array([0.2]), np.array([0.55]), np.array([1.3])):  # 1.3: far outside
        got = _cond_gmm(JOINT0).at(xc).log_pdf(xf)
        w, m, c = JOINT0
        joint = _mix_logpdf(np.column_stack([xf, np.repeat(xc[None], 50, 0)]), w, m, c)
        marg = _mix_logpdf(
            xc[None], w, [mu[2:] for mu in np.asarray(m)], [cv[2:, 2:] for cv in np.asarray(c)]
        )
        np.testing.assert_allclose(got, joint - marg, rtol=1e-10, atol=1e-10)


def test_fitted_mixture_conditional_matches_sklearn_joint_and_scipy_marginal():
    rng = np.random.default_rng(1)
    xc = rng.uniform(0, 1, (400, 2))
    xf = np.column_stack([xc[:, 0] * 0.5 + rng.normal(0, 0.05, 400), rng.uniform(0, 1, 400)])
    group = rng.integers(0, 2, 400)
    dens = fit_group_density(xf, group, xc, components=2, seed=3)
    for m in (0, 1):
        est = GaussianMixture(2, reg_covar=1e-4, random_state=3)
        est.fit(np.hstack([xf, xc])[group == m])  # the same fit, done here
        for pattern in (xc[0], xc[7]):
            grid = rng.uniform(0, 1, (20, 2))
            joint = est.score_samples(np.column_stack([grid, np.repeat(pattern[None], 20, 0)]))
            marg = _mix_logpdf(
                pattern[None],
                est.weights_,
                est.means_[:, 2:],
                est.covariances_[:, 2:, 2:],
            )
            got = dens.models[m].at(pattern).log_pdf(grid)
            np.testing.assert_allclose(got, joint - marg, rtol=1e-8, atol=1e-8)


def test_without_immutables_the_density_is_the_unconditioned_mixture():
    rng = np.random.default_rng(2)
    xf = rng.uniform(0, 1, (300, 2))
    group = rng.integers(0, 2, 300)
    dens = fit_group_density(xf, group, None, components=3, seed=5)
    assert dens.dc == 0
    grid = rng.uniform(0, 1, (40, 2))
    ref = sum(
        GaussianMixture(3, reg_covar=1e-4, random_state=5).fit(xf[group == m]).score_samples(grid)
        for m in (0, 1)
    )
    np.testing.assert_allclose(dens.log_product(grid), ref, rtol=1e-9)


def test_conditional_kde_is_a_kernel_mixture_weighted_by_the_immutables():
    rng = np.random.default_rng(3)
    xc = rng.uniform(0, 1, (200, 1))
    xf = np.column_stack([xc[:, 0] + rng.normal(0, 0.1, 200), rng.uniform(0, 1, 200)])
    group = np.repeat([0, 1], 100)
    h = 0.08
    dens = fit_group_density(xf, group, xc, kind="kde", bandwidth=h)
    grid = rng.uniform(0, 1, (30, 2))
    for m in (0, 1):
        rows = group == m
        joint = KernelDensity(bandwidth=h).fit(np.hstack([xf, xc])[rows])
        marg = KernelDensity(bandwidth=h).fit(xc[rows])
        for pattern in (0.3, 0.9):
            got = dens.models[m].at(np.array([pattern])).log_pdf(grid)
            # kernels at the rows' x_f, weights proportional to K_h(x_c - x_c,i), by hand
            log_w = -0.5 * (xc[rows, 0] - pattern) ** 2 / h**2
            log_w -= logsumexp(log_w)
            d2 = ((grid[:, None, :] - xf[rows][None]) ** 2).sum(axis=-1)
            by_hand = logsumexp(log_w[None] - 0.5 * d2 / h**2, axis=1) - np.log(2 * np.pi * h * h)
            np.testing.assert_allclose(got, by_hand, rtol=1e-7, atol=1e-7)
            # = log joint KDE - log marginal KDE (scikit-learn's tree sums: 1e-5 in the tails)
            want = joint.score_samples(np.column_stack([grid, np.full(30, pattern)]))
            want -= marg.score_samples(np.array([[pattern]]))
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------------------
# sampling from the product


@pytest.mark.parametrize("sampler", ["exact", "rejection"])
@pytest.mark.parametrize("xc", [0.25, 0.6])
def test_samplers_draw_the_normalised_product_of_the_conditionals(sampler, xc):
    dens = GroupDensity((_cond_gmm(JOINT0), _cond_gmm(JOINT1)), "gmm")
    pattern = np.array([xc])
    draws = dens.sample_product(6000, np.random.default_rng(0), pattern, sampler=sampler)[0]
    assert len(draws) == 6000
    mean, cov = _product_moments(*_condition(*JOINT0, 2, pattern), *_condition(*JOINT1, 2, pattern))
    se = np.sqrt(np.diag(cov) / len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 5 * se)
    assert np.allclose(np.cov(draws.T), cov, rtol=0.15, atol=2e-4)


@pytest.mark.parametrize("sampler", ["exact", "rejection"])
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
def test_unconditioned_samplers_draw_the_normalised_product(sampler, p0, p1):
    dens = GroupDensity((_cond_gmm(p0, df=2), _cond_gmm(p1, df=2)), "gmm")
    assert dens.dc == 0
    draws, logp = dens.sample_product(6000, np.random.default_rng(0), sampler=sampler)
    assert len(draws) == 6000
    mean, cov = _product_moments(*p0, *p1)
    se = np.sqrt(np.diag(cov) / len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 5 * se)
    assert np.allclose(np.cov(draws.T), cov, rtol=0.15, atol=2e-4)
    # the returned log densities are the product's, recomputed with scipy
    want = _mix_logpdf(draws[:50], *p0) + _mix_logpdf(draws[:50], *p1)
    np.testing.assert_allclose(logp[:50], want, rtol=1e-9)


def test_density_bound_is_an_upper_bound():
    g = _cond_gmm(([0.3, 0.7], [[0.2, 0.2], [0.25, 0.3]], [np.eye(2) * 0.01, np.eye(2) * 0.004]))
    mix = g.at(np.zeros(0))
    assert isinstance(mix, GaussianMix)
    grid = np.stack(np.meshgrid(np.linspace(0, 0.5, 201), np.linspace(0, 0.5, 201)), -1)
    assert mix.log_bound() >= mix.log_pdf(grid.reshape(-1, 2)).max()
    # and for a conditional: the bound of P(. | x_c) covers its peak
    cond = _cond_gmm(JOINT1).at(np.array([0.4]))
    grid = np.stack(np.meshgrid(np.linspace(0, 1, 201), np.linspace(0, 1, 201)), -1)
    assert cond.log_bound() >= cond.log_pdf(grid.reshape(-1, 2)).max()


def test_kde_density_samples_and_bounds():
    rng = np.random.default_rng(1)
    x = np.vstack([rng.normal(0.4, 0.05, (100, 2)), rng.normal(0.5, 0.05, (100, 2))])
    g = np.repeat([0, 1], 100)
    dens = fit_group_density(x, g, kind="kde", bandwidth=0.05)
    draws = dens.sample_product(500, rng)[0]
    assert len(draws) == 500
    # the product concentrates between the groups
    assert 0.4 < draws.mean() < 0.5
    with pytest.raises(MethodError, match="unknown density"):
        fit_group_density(x, g, kind="flow")
    with pytest.raises(MethodError, match="Gaussian mixtures"):
        dens.sample_product(10, rng, sampler="exact")
    with pytest.raises(MethodError, match="unknown sampler"):
        dens.sample_product(10, rng, sampler="mcmc")


# ---------------------------------------------------------------------------------------
# the recourse method


def test_ebr_returns_the_closest_approved_sample_above_beta(synth):
    data, model = synth
    x = data.codes[~model.approves(data.codes)][::10]
    method = EBR(seed=0, n_samples=800, beta_quantile=0.5).fit(data, model)
    assert len(method.cond_cols_) == 0  # the synthetic data: no immutable but the group
    res = method.get_counterfactuals(x)
    assert res.valid.all()
    samples = method.samples_
    # the kept samples are the upper half of the drawn ones by product density
    assert 380 <= len(samples) <= 420
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


def test_absolute_beta_filters_by_product_density(synth):
    data, model = synth
    loose = EBR(seed=0, n_samples=500, beta=0.0).fit(data, model)
    assert len(loose.samples_) == 500
    dens = np.exp(loose.group_density_.log_product(loose.samples_))
    beta = float(np.median(dens))
    strict = EBR(seed=0, n_samples=500, beta=beta).fit(data, model)
    assert (np.exp(strict.group_density_.log_product(strict.samples_)) >= beta).all()
    assert len(strict.samples_) < len(loose.samples_)


AGED = load_schema(
    {
        "name": "aged",
        "profile_items": [
            {"key": "x1", "type": "numeric", "min": 0, "max": 1, "constraint": "any"},
            {"key": "x2", "type": "numeric", "min": 0, "max": 1, "constraint": "up"},
            {"key": "age", "type": "numeric", "min": 0, "max": 1, "constraint": "fixed"},
            {"key": "sex", "type": "binary", "options": ["f", "m"], "constraint": "fixed"},
        ],
    }
)
AGES = np.array([0.1, 0.3, 0.5, 0.7, 0.9])


@pytest.fixture(scope="module")
def aged():
    """Two mutable numeric items that depend on a fixed `age` (5 values, so patterns repeat)
    and on the group `sex`; x2 may only go up. On the [0, 1] scale codes = normalised."""
    rng = np.random.default_rng(11)
    n = 1000
    age = rng.choice(AGES, n)
    sex = rng.integers(1, 3, n)
    x1 = np.clip(0.15 + 0.6 * age + 0.1 * (sex - 1) + rng.normal(0, 0.07, n), 0, 1)
    x2 = np.clip(0.7 - 0.4 * age + 0.08 * (sex - 1) + rng.normal(0, 0.07, n), 0, 1)
    score = x1 + x2 - 0.2 * age + rng.normal(0, 0.05, n)
    y = (score > np.median(score)).astype(int)
    codes = np.column_stack([x1, x2, age, sex]).astype(float)
    data = Dataset("aged", AGED, codes, y, sex - 1, "sex", ("f", "m"))
    return data, logistic(data)


def test_conditioning_columns_are_the_immutables_but_the_group(aged):
    data, model = aged
    method = EBR(seed=0, n_samples=300).fit(data, model)
    assert method.cond_cols_.tolist() == [2]  # age; not sex
    assert method.samples_ is None  # drawn per pattern
    flat = EBR(seed=0, n_samples=300, condition=False).fit(data, model)
    assert flat.cond_cols_.tolist() == [] and flat.samples_ is not None


def test_samples_follow_the_immutables(aged):
    data, model = aged
    method = EBR(seed=0, n_samples=1500, beta_quantile=0.0).fit(data, model)
    young = method.samples_for(np.array([0.1])).mean(axis=0)
    old = method.samples_for(np.array([0.9])).mean(axis=0)
    # in the data x1 rises by 0.6 per unit of age and x2 falls by 0.4: so do the samples
    assert old[0] - young[0] == pytest.approx(0.6 * 0.8, abs=0.1)
    assert old[1] - young[1] == pytest.approx(-0.4 * 0.8, abs=0.1)
    flat = EBR(seed=0, n_samples=1500, beta_quantile=0.0, condition=False).fit(data, model)
    assert np.array_equal(flat.samples_for(np.zeros(0)), flat.samples_)


@pytest.mark.parametrize("density", ["gmm", "kde"])
def test_closest_approved_sample_of_the_factuals_pattern_by_brute_force(aged, density):
    data, model = aged
    x = data.codes[~model.approves(data.codes)][::4]
    method = EBR(seed=1, n_samples=400, density=density).fit(data, model)
    res = method.get_counterfactuals(x)
    assert res.valid.mean() > 0.8
    kept = {age: method.samples_for(np.array([age])) for age in AGES}
    for i in range(len(x)):
        # every kept sample of the factual's pattern with its immutables, numeric values
        # clipped to their range; usable if approved and x2 (up) does not go down
        samples = np.clip(kept[x[i, 2]], 0, 1)
        cands = np.column_stack([samples, np.repeat(x[i, 2:][None], len(samples), 0)])
        ok = model.approves(cands) & (cands[:, 1] >= x[i, 1] - 1e-12)
        if not ok.any():
            assert not res.valid[i] and res.status[i] == "none_found"
            continue
        d = np.linalg.norm(cands[:, :2] - x[i, :2], axis=1)
        d[~ok] = np.inf
        assert res.valid[i]
        np.testing.assert_allclose(res.counterfactuals[i], cands[np.argmin(d)], atol=1e-12)
    # immutables never change, up items never go down
    v = res.valid
    np.testing.assert_array_equal(res.counterfactuals[v][:, 2:], x[v][:, 2:])
    assert (res.counterfactuals[v][:, 1] >= x[v][:, 1] - CHANGE_TOL).all()


def test_a_factuals_counterfactual_does_not_depend_on_its_batch(aged):
    data, model = aged
    x = data.codes[~model.approves(data.codes)][:40]
    method = EBR(seed=2, n_samples=300).fit(data, model)
    whole = method.get_counterfactuals(x)
    for i in (0, 7, 23):
        alone = method.get_counterfactuals(x[i])
        np.testing.assert_array_equal(alone.counterfactuals[0], whole.counterfactuals[i])
    # and a pickled method gives the same
    again = pickle.loads(pickle.dumps(method)).get_counterfactuals(x)
    np.testing.assert_array_equal(again.counterfactuals, whole.counterfactuals)


def test_beta_per_pattern_quantile_and_absolute(aged):
    data, model = aged
    pattern = np.array([0.5])
    all_ = EBR(seed=0, n_samples=1000, beta_quantile=0.0).fit(data, model)
    drawn = all_.samples_for(pattern)
    assert len(drawn) == 1000
    logp = all_.group_density_.log_product(drawn, pattern)
    upper = EBR(seed=0, n_samples=1000, beta_quantile=0.75).fit(data, model)
    kept = upper.samples_for(pattern)
    # the same draws (same seed and pattern); kept: those at or above the 0.75 quantile
    np.testing.assert_array_equal(kept, drawn[logp >= np.quantile(logp, 0.75)])
    assert 240 <= len(kept) <= 260
    beta = float(np.exp(np.quantile(logp, 0.4)))
    absolute = EBR(seed=0, n_samples=1000, beta=beta).fit(data, model)
    got = absolute.samples_for(pattern)
    np.testing.assert_array_equal(got, drawn[np.exp(logp) >= beta])
    # a beta above every sample's product density: nothing kept, factuals reported invalid
    none = EBR(seed=0, n_samples=200, beta=float(np.exp(logp.max())) * 1e6).fit(data, model)
    x = data.codes[~model.approves(data.codes)][:10]
    res = none.get_counterfactuals(x)
    assert not res.valid.any() and set(res.status) == {"none_found"}
    assert np.isnan(res.counterfactuals).all()


@pytest.mark.parametrize(
    "params, message",
    [
        ({"beta": -1.0}, "beta must be"),
        ({"beta": float("inf")}, "beta must be"),
        ({"beta_quantile": 1.5}, "beta_quantile"),
        ({"n_samples": 0}, "n_samples"),
        ({"max_rounds": 0}, "max_rounds"),
        ({"components": 0}, "components"),
        ({"density": "flow"}, "unknown density"),
        ({"sampler": "mcmc"}, "unknown sampler"),
        ({"sampler": "exact", "density": "kde"}, "exact sampler needs density='gmm'"),
    ],
)
def test_bad_parameters_are_refused(aged, params, message):
    data, model = aged
    with pytest.raises(MethodError, match=message):
        EBR(**params).fit(data, model)


def test_a_pattern_of_the_wrong_width_is_refused(aged):
    data, model = aged
    method = EBR(seed=0, n_samples=100).fit(data, model)
    with pytest.raises(MethodError, match="conditions on 1 columns, got 2"):
        method.group_density_.at(np.array([0.1, 0.2]))
