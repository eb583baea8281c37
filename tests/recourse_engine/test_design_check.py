"""The design check's figures are counts of what `PoolIndex.select` returns for each
sampled profile: approvals as the participant's own decision judges them, each part's picks
and own plans, the fallbacks' reasons; the warnings name exactly the figures past the
thresholds."""

from __future__ import annotations

import numpy as np
import pytest

from recourse_engine import PoolIndex, carloan_schema, pool_from_frame, rejects_factual, synth_pool
from recourse_engine.decision import IncomeRule, train_sklearn_model
from recourse_engine.design_check import (
    Thresholds,
    binomial_interval,
    check_design,
    design_warnings,
    sample_rows,
    warning_key,
)
from recourse_engine.generated import Generator, fit_on_pool, method_settings

SCHEMA = carloan_schema()


@pytest.fixture(scope="module")
def pool():  # type: ignore[no-untyped-def]
    return pool_from_frame(synth_pool(SCHEMA, n=400, seed=3), SCHEMA)


@pytest.fixture(scope="module")
def items_index(pool):  # type: ignore[no-untyped-def]
    pool.extra["approved"] = (pool.income >= np.median(pool.income)).astype(int)
    model = train_sklearn_model(SCHEMA, pool, "approved", seed=0)
    return PoolIndex(SCHEMA, pool, model)


def test_sample_rows_are_distinct_seeded_and_capped() -> None:
    a = sample_rows(1000, 50, seed=4)
    assert len(set(a.tolist())) == 50 and (np.diff(a) > 0).all()
    assert (sample_rows(1000, 50, seed=4) == a).all()
    assert not (sample_rows(1000, 50, seed=5) == a).all()
    assert len(sample_rows(30, 50, seed=4)) == 30
    with pytest.raises(ValueError, match="at least 1"):
        sample_rows(30, 0, seed=4)


def test_pool_parts_count_what_select_returns(pool) -> None:  # type: ignore[no-untyped-def]
    index = PoolIndex(SCHEMA, pool, IncomeRule())
    rows = sample_rows(len(pool), 40, seed=1)
    codes, income = pool.codes[rows], pool.income[rows]
    design = "sparsest:1,random:2"
    result = check_design(index, codes, income, {"": design}, {}, seed=9)
    # the income rule rejects every participant's own profile (a loan above a quarter)
    assert result["approval_rate"] == 0.0 and result["sample"]["rejected"] == 40
    (cond,) = result["conditions"]
    shown = [len(index.select(codes[i], income[i], design, seed=[9, i]).picks) for i in range(40)]
    assert cond["plans_per_participant"] == pytest.approx(np.mean(shown), abs=1e-4)
    assert cond["full_set_rate"] == pytest.approx(np.mean([k == 3 for k in shown]), abs=1e-4)
    sparsest, rnd = cond["parts"]
    assert sparsest["label"] == "sparsest" and rnd["k"] == 2
    assert sparsest["shown"] + rnd["shown"] == sum(shown)
    assert "own_plan_rate" not in sparsest  # a pool part has no own plan to count


def test_method_part_counts_own_plans_and_fallback_reasons(items_index) -> None:  # type: ignore[no-untyped-def]
    pool = items_index.pool
    settings = method_settings("gs", {}, SCHEMA)
    gs = Generator(settings, method=fit_on_pool(settings, SCHEMA, pool, items_index.model))
    unfitted = Generator(method_settings("wachter", None, SCHEMA), unavailable="never fitted")
    rows = sample_rows(len(pool), 60, seed=2)
    codes, income = pool.codes[rows], pool.income[rows]
    designs = {"a": "proximate:1,gs:1", "b": "random:1,wachter:1"}
    gens = {"a": {"gs": gs}, "b": {"wachter": unfitted}}
    result = check_design(items_index, codes, income, designs, gens, seed=0)
    rejected = [i for i in range(60) if rejects_factual(items_index.model, codes[i], income[i])]
    assert result["sample"]["approved"] == 60 - len(rejected)
    own = shown_b = 0
    for i in rejected:
        sel = items_index.select(
            codes[i], income[i], designs["a"], seed=[0, i], generators=gens["a"]
        )
        own += sum(p.origin == "generated" for p in sel.picks)
        sel = items_index.select(
            codes[i], income[i], designs["b"], seed=[0, i], generators=gens["b"]
        )
        shown_b += sum(p.strategy == "wachter" for p in sel.picks)
    a, b = result["conditions"]
    gs_part = a["parts"][1]
    assert gs_part["method"] == "gs" and gs_part["own_plan"] == own
    assert gs_part["own_plan"] + gs_part["fallback"] == len(rejected)
    wachter = b["parts"][1]
    assert wachter["own_plan_rate"] == 0.0
    assert wachter["fallback_reasons"] == [{"reason": "never fitted", "n": len(rejected)}]
    # the fallback (the nearest admissible pool profile still free) is shown where one is
    # left, with its distances
    assert wachter["shown"] == shown_b and wachter["sparsity"]["mean"] >= 1


def test_warnings_name_figures_past_the_thresholds() -> None:
    result = {
        "approval_rate": 0.3,
        "conditions": [
            {
                "condition": "a",
                "parts": [
                    {"index": 0, "label": "proximate", "method": ""},
                    {"index": 1, "label": "wachter", "method": "wachter", "own_plan_rate": 0.5,
                     "fallback_reasons": [{"reason": "the method found no counterfactual", "n": 9}]},
                    {"index": 2, "label": "gs", "method": "gs", "own_plan_rate": 0.95,
                     "fallback_reasons": []},
                ],
            }
        ],
    }  # fmt: skip
    keys = [w["key"] for w in design_warnings(result, Thresholds())]
    assert keys == ["approval_rate", warning_key("a", 1, "wachter")]
    text = design_warnings(result, Thresholds())[1]["text"]
    assert "50%" in text and "the method found no counterfactual (9)" in text
    assert design_warnings(result, Thresholds(0.5, 0.4)) == []


def test_binomial_interval_holds_the_expected_count() -> None:
    lo, hi = binomial_interval(100, 0.8)
    assert lo < 80 < hi and lo > 65 and hi < 92
    assert binomial_interval(50, 1.0) == (50, 50)
    assert binomial_interval(0, 0.5) == (0, 0)
