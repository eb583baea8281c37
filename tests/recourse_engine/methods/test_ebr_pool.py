"""The pool strategy `ebr:k` by brute force (with and without a fixed item), and its fit:
stored and loaded through the fit store, groups from a column or a fixed item."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp
from scipy.stats import multivariate_normal
from sklearn.mixture import GaussianMixture

from recourse_engine import carloan_schema, parse_design, pool_from_frame, synth_pool
from recourse_engine.distances import CHANGE_TOL
from recourse_engine.encoding import normalise
from recourse_engine.fit_store import dump_fit, load_fit
from recourse_engine.methods import MethodError, attach_pool_density
from recourse_engine.methods.ebr.ebr_pool import PoolDensity, fit_pool_density
from recourse_engine.schema import load_schema
from recourse_engine.selection import PoolIndex


def _mix_logpdf(x, weights, means, covs):
    """log of a Gaussian mixture's density, with scipy."""
    parts = [
        np.log(w) + multivariate_normal(m, c).logpdf(x)
        for w, m, c in zip(weights, means, covs, strict=True)
    ]
    return logsumexp(np.column_stack(parts), axis=1)


@pytest.fixture(scope="module")
def carloan_pool():
    schema = carloan_schema()
    frame = synth_pool(schema, n=1500, seed=4)
    return schema, pool_from_frame(frame, schema)


def _admissible(schema, pool, x, inc, r):
    c = pool.codes[r]
    if pool.income[r] * 3 < inc * 4 or np.all(np.abs(c - x) <= CHANGE_TOL):
        return False
    return not any(
        (it.constraint == "up" and c[j] < x[j])
        or (it.constraint == "down" and c[j] > x[j])
        or (it.constraint == "fixed" and c[j] != x[j])
        for j, it in enumerate(schema.items)
    )


def _proximity(schema, c, x):
    return sum(
        abs(c[j] - x[j]) / it.span if it.is_graded else float(c[j] != x[j])
        for j, it in enumerate(schema.items)
    )


def test_pool_strategy_picks_the_closest_balanced_admissible_profile(carloan_pool):
    schema, pool = carloan_pool
    design = parse_design("ebr:1,random:1")
    assert design.parts[0].strategy == "ebr"
    density = fit_pool_density(schema, pool, beta_quantile=0.6)
    assert not density.conditional  # the car-loan schema has no fixed item
    attach_pool_density(pool, density)
    index = PoolIndex(schema, pool)
    checked = 0
    for i in range(0, 60, 3):
        x, inc = pool.codes[i], float(pool.income[i])
        sel = index.select(x, inc, design, seed=i)
        # brute force: every pool row, admissible by the definition, above the threshold
        best = np.inf
        for r in range(len(pool)):
            if not _admissible(schema, pool, x, inc, r) or density.scores[r] < density.threshold:
                continue
            best = min(best, _proximity(schema, pool.codes[r], x))
        ebr_picks = [p for p in sel.picks if p.strategy == "ebr"]
        if np.isfinite(best):
            assert len(ebr_picks) == 1
            assert density.scores[ebr_picks[0].pool_index] >= density.threshold
            assert ebr_picks[0].proximity == pytest.approx(best, abs=1e-9)
            checked += 1
        else:
            assert ebr_picks == [] and sel.shortfall_by_part.get("ebr") == 1
    assert checked >= 5


AGED_POOL = load_schema(
    {
        "name": "aged_pool",
        "profile_items": [
            {"key": "edu", "type": "ordinal", "options": list("abcde"), "constraint": "up"},
            {"key": "hours", "type": "ordinal", "options": list("abcdef"), "constraint": "any"},
            {"key": "debt", "type": "ordinal", "options": list("abcd"), "constraint": "down"},
            {"key": "age", "type": "ordinal", "options": list("wxyz"), "constraint": "fixed"},
        ],
    }
)


@pytest.fixture(scope="module")
def aged_pool():
    rng = np.random.default_rng(5)
    n = 1200
    age = rng.integers(1, 5, n)
    male = rng.integers(0, 2, n)
    edu = np.clip(np.round(1 + age * 0.8 + male * 0.5 + rng.normal(0, 0.8, n)), 1, 5)
    hours = np.clip(np.round(6 - age + male + rng.normal(0, 1, n)), 1, 6)
    debt = np.clip(np.round(1 + age * 0.5 + rng.normal(0, 0.7, n)), 1, 4)
    frame = pd.DataFrame(
        {
            "id": [f"p{i}" for i in range(n)],
            "income": (3_000_000 + 600_000 * edu + rng.integers(0, 900_000, n)).astype(int),
            "gender": np.where(male == 1, "Male", "Female"),
            "edu": edu.astype(int),
            "hours": hours.astype(int),
            "debt": debt.astype(int),
            "age": age,
        }
    )
    return AGED_POOL, pool_from_frame(frame, AGED_POOL)


def _reference_scores(schema, pool, xc, seed=0, components=3):
    """log P0(x_f | x_c) + log P1(x_f | x_c) of every pool row, from scikit-learn joint
    mixtures fitted here (the same fits) and scipy's marginal of x_c."""
    z = normalise(schema, pool.codes)
    zf, zc = z[:, :3], z[:, 3:]
    labels = pool.extra["gender"].astype(str).to_numpy()
    total = np.zeros(len(pool))
    for label in ("Female", "Male"):  # sorted: Female is group 0
        rows = labels == label
        est = GaussianMixture(components, reg_covar=1e-4, random_state=seed)
        est.fit(np.hstack([zf, zc])[rows])
        joint = est.score_samples(np.column_stack([zf, np.repeat(xc[None], len(pool), 0)]))
        marg = _mix_logpdf(xc[None], est.weights_, est.means_[:, 3:], est.covariances_[:, 3:, 3:])
        total += joint - marg
    return total


def test_pool_strategy_conditions_on_the_factuals_fixed_items(aged_pool):
    schema, pool = aged_pool
    density = fit_pool_density(schema, pool, beta_quantile=0.5)
    assert density.conditional and density.cond_cols.tolist() == [3]
    attach_pool_density(pool, density)
    index = PoolIndex(schema, pool)
    design = parse_design("ebr:1")
    checked, refs = 0, {}
    for i in range(0, 600, 5):
        x, inc = pool.codes[i], float(pool.income[i])
        xc = normalise(schema, x[None])[0, 3:]
        if x[3] not in refs:
            refs[x[3]] = _reference_scores(schema, pool, xc)
        ref = refs[x[3]]
        thr = np.quantile(ref, 0.5)
        scores, got_thr = density.scores_for(schema, x)
        np.testing.assert_allclose(scores, ref, rtol=1e-8, atol=1e-8)
        assert got_thr == pytest.approx(thr, rel=1e-9)
        sel = index.select(x, inc, design, seed=i)
        best = np.inf
        for r in range(len(pool)):
            if _admissible(schema, pool, x, inc, r) and ref[r] >= thr:
                best = min(best, _proximity(schema, pool.codes[r], x))
        picks = [p for p in sel.picks if p.strategy == "ebr"]
        if np.isfinite(best):
            assert len(picks) == 1
            assert pool.codes[picks[0].pool_index][3] == x[3]  # the fixed item is kept
            assert picks[0].proximity == pytest.approx(best, abs=1e-9)
            checked += 1
        else:
            assert picks == []
    assert checked >= 20
    # the threshold differs between age patterns: it is taken per pattern
    thresholds = {a: density.scores_at(np.array([(a - 1) / 3]))[1] for a in (1, 4)}
    assert thresholds[1] != pytest.approx(thresholds[4])


def test_stored_pool_density_scores_and_picks_as_the_fitted_one(aged_pool):
    schema, pool = aged_pool
    density = fit_pool_density(schema, pool)
    x = pool.codes[3]
    before = density.scores_for(schema, x)
    assert len(density._cache) == 1
    again = load_fit("ebr", dump_fit("ebr", density))
    assert len(again._cache) == 0  # the per-pattern cache is not stored
    np.testing.assert_array_equal(again.scores_for(schema, x)[0], before[0])
    assert again.scores_for(schema, x)[1] == before[1]
    # the same picks from a second copy of the pool with the loaded fit attached
    copy = pool_from_frame(pool.to_frame(AGED_POOL), AGED_POOL)
    attach_pool_density(pool, density)
    attach_pool_density(copy, again)
    for i in range(0, 300, 30):
        x, inc = pool.codes[i], float(pool.income[i])
        got = [PoolIndex(schema, p).select(x, inc, "ebr:2", seed=i).picks for p in (pool, copy)]
        assert [p.pool_id for p in got[0]] == [p.pool_id for p in got[1]]


def test_pool_group_may_be_a_fixed_item_which_is_then_not_conditioned_on(aged_pool):
    schema, pool = aged_pool
    density = fit_pool_density(schema, pool, group_column="age")
    # groups: the two most frequent ages; the only fixed item is the group: no conditioning
    assert not density.conditional and density.scores.shape == (len(pool),)


def test_pool_density_needs_a_group(carloan_pool):
    schema, pool = carloan_pool
    with pytest.raises(MethodError, match="no group column 'sex'"):
        fit_pool_density(schema, pool, group_column="sex")
    bare = pool_from_frame(pd.DataFrame(pool.to_frame(schema)).drop(columns="gender"), schema)
    with pytest.raises(MethodError, match="gender"):
        PoolIndex(schema, bare).select(bare.codes[0], float(bare.income[0]), "ebr:1")
    with pytest.raises(MethodError, match="different number of rows"):
        attach_pool_density(bare, PoolDensity(np.zeros(3), 0.0))
