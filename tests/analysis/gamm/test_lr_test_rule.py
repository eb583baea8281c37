"""When anova.gam's likelihood-ratio test applies (``analysis.gamm.compare.why_no_lr_test``).

mgcv prints a test for any two fits: on the studies of make_no_lr_test_fixtures.R (mgcv 1.8-41,
70 participants rating plans at random) it gives p = 0.024 on a df difference of -1.35 beside
an AIC that favours the smaller model (seed 28), and no p where the larger model fits worse
(seed 8). Our table equals mgcv's in both; the rule then says there is no test.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from analysis.gamm import anova_chisq, fit_gamm, nesting_problem, why_no_lr_test

FIX = Path(__file__).parent / "fixtures"
COMMON = "acceptance ~ strategy + s(proximity, k = 5) + s(participant, bs = 're')"
BY = "acceptance ~ strategy + s(proximity, by = strategy, k = 5) + s(participant, bs = 're')"


def _data(seed: int) -> pd.DataFrame:
    return pd.read_csv(FIX / f"study_no_lr_test_{seed}.csv")


def _mgcv(seed: int) -> dict:
    return json.loads((FIX / "no_lr_test_anova.json").read_text())[str(seed)]


@pytest.fixture(scope="module")
def fits() -> dict[int, tuple]:
    out = {}
    for seed in (8, 28):
        data = _data(seed)
        out[seed] = (fit_gamm(COMMON, data, method="ML"), fit_gamm(BY, data, method="ML"))
    return out


def test_negative_df_difference_equals_mgcv_and_gets_no_test(fits):
    m0, m1 = fits[28]
    ref, an = _mgcv(28), anova_chisq(m0, m1)
    assert an.df < 0 and abs(an.df - ref["df"]) < 0.01
    assert abs(an.deviance - ref["deviance"]) < 0.01 * abs(ref["deviance"])
    # R's table has a "significant" p here (the models tested the wrong way round) and so has
    # anova_chisq, which mirrors it; the AICs favour the smaller model
    assert ref["p"] < 0.05 and abs(an.p - ref["p"]) < 0.01 * ref["p"]
    assert m0.aic < m1.aic and ref["aic"][0] < ref["aic"][1]
    why = why_no_lr_test(m0, m1, an)
    assert why is not None
    assert "no more effective degrees of freedom" in why and "-1.35" in why


def test_larger_model_fitting_worse_has_no_p_as_in_r(fits):
    m0, m1 = fits[8]
    ref, an = _mgcv(8), anova_chisq(m0, m1)
    assert an.df > 0 and abs(an.df - ref["df"]) < 0.01
    assert an.deviance < 0 and abs(an.deviance - ref["deviance"]) < 0.02 * abs(ref["deviance"])
    assert ref["p"] is None and math.isnan(an.p)
    why = why_no_lr_test(m0, m1, an)
    assert why is not None and "fits no closer" in why


def test_the_common_smooth_is_nested_in_the_smooth_by_level(fits):
    m0, m1 = fits[28]
    assert nesting_problem(m0, m1) is None
    assert "s(proximity):strategy" in nesting_problem(m1, m0)


@pytest.mark.parametrize(
    ("bigger", "missing"),
    [
        (
            "acceptance ~ strategy + s(proximity, by = strategy, k = 4) + s(participant, bs = 're')",
            "s(proximity)",
        ),  # another basis dimension: not the same smooth
        ("acceptance ~ strategy + s(proximity, by = strategy, k = 5)", "s(participant)"),
        ("action ~ strategy + s(proximity, k = 5) + s(participant, bs = 're')", "outcomes"),
    ],
)
def test_models_that_are_not_nested_get_no_test(fits, bigger, missing):
    m0 = fits[28][0]
    other = fit_gamm(bigger, _data(28), method="ML")
    problem = nesting_problem(m0, other)
    assert problem is not None and missing in problem
    if other.n == m0.n and other.formula.startswith("acceptance"):
        why = why_no_lr_test(m0, other, anova_chisq(m0, other))
        assert why is not None and why.startswith("the models are not nested")
