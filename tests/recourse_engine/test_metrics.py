import numpy as np
import pytest

from recourse_engine import IncomeRule, carloan_schema, normalise, pool_from_frame, synth_pool
from recourse_engine.metrics import cost_gap, failure_rate, recourse_cost, success_rates, ynn

from .reference import slow_l2


def test_cost_gap_and_success_rates_by_direct_counting():
    costs = np.array([1.0, 3.0, np.nan, 2.0, 6.0])
    groups = ["f", "f", "f", "m", "m"]
    per, gap = cost_gap(costs, groups)
    assert per == {"f": 2.0, "m": 4.0} and gap == 2.0
    per, gap = success_rates(~np.isnan(costs), groups)
    assert per == pytest.approx({"f": 2 / 3, "m": 1.0}) and gap == pytest.approx(1 / 3)


def test_recourse_cost_l2_matches_direct_formula_and_skips_missing():
    s = carloan_schema()
    f = synth_pool(s, n=10, seed=2)[s.keys].to_numpy(float)
    cf = synth_pool(s, n=10, seed=3)[s.keys].to_numpy(float)
    cf[4] = np.nan
    got = recourse_cost(s, f, cf, "l2")
    assert np.isnan(got[4])
    for i in [0, 1, 9]:
        assert got[i] == pytest.approx(slow_l2(s, list(f[i]), list(cf[i])))


def test_ynn_and_failure_rate_against_direct_neighbours():
    s = carloan_schema()
    frame = synth_pool(s, n=120, seed=4)
    pool = pool_from_frame(frame, s)
    rule = IncomeRule()
    cf = pool.codes[:6].copy()
    cf_income = pool.income[:6].copy()
    factual_income = np.full(6, 4_000_000.0)
    cf[5] = np.nan
    got = ynn(s, cf, pool, rule, k=5, cf_income=cf_income, factual_income=factual_income)
    z = normalise(s, pool.codes)
    total = 0.0
    for i in range(5):
        d = np.linalg.norm(z - normalise(s, cf[i : i + 1]), axis=1)
        nb = np.argsort(d, kind="stable")[:5]
        h_cf = 3 * cf_income[i] >= 4 * factual_income[i]
        total += sum(abs(int(h_cf) - int(3 * pool.income[j] >= 4 * factual_income[i])) for j in nb)
    assert got == pytest.approx(1 - total / 25)
    inv = failure_rate(cf, rule, cf_income=cf_income, factual_income=factual_income)
    valid = [3 * cf_income[i] >= 4 * factual_income[i] for i in range(5)]
    assert inv == pytest.approx(1 - sum(valid) / 6)


def test_failure_rate_with_a_trained_model_counts_unapproved_and_missing():
    from recourse_engine import train_sklearn_model

    s = carloan_schema()
    frame = synth_pool(s, n=300, seed=6)
    frame["ok"] = (frame["position"] >= 3).astype(int)
    pool = pool_from_frame(frame, s)
    model = train_sklearn_model(s, pool, "ok")
    cf = pool.codes[:40].copy()
    cf[:5] = np.nan
    approved = [bool(model.approves(cf[i : i + 1])[0]) for i in range(5, 40)]
    assert failure_rate(cf, model) == pytest.approx(1 - sum(approved) / 40)
