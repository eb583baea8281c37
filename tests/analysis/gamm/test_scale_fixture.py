"""Agreement at 5,000 participants (25,000 whole-number ratings; more levels than the dense
random-effect test takes, so the structured one of ``re_test`` answers) with mgcv's
bam(method = "fREML") and with gamm4, on the fixtures make_scale_fixture.R made.

Tolerances are test_mgcv_agreement.py's: EDF of s(x) within 0.05, random-effect EDFs within
1%, F and Ref.df within 3%, p-values on the same side of 0.05 and within 10% where mgcv's is
above 0.001, intercept within 1%, AIC within 0.2%, scale within 1%, the -REML score within
0.01; standard deviations of the variance components within 1% (test_comparison_models.py's
gam.vcomp tolerance). gamm4 maximises the same restricted likelihood with lme4; its summary
tests s(x) only (lme4 reports no test of the random effects), with its EDF as Ref.df (see
test_smooth_intercept_and_reml_equal_gamm4).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from analysis.gamm import fit_gamm, vcomp
from analysis.gamm import re_test as rt

FIXTURES = Path(__file__).parent / "fixtures"
RANDOM = ("s(participant)", "s(participant,distance)")


def _ref(name: str) -> dict:
    return json.loads((FIXTURES / f"scale5000_{name}.json").read_text())


@pytest.fixture(scope="module")
def fit():
    data = pd.read_csv(FIXTURES / "study_scale5000.csv", dtype={"participant": str})
    return fit_gamm(data, "rating", "distance", "participant")


def test_fixture_is_large_enough_for_the_structured_test(fit):
    assert fit.design.n_groups == 5000 > rt.DENSE_MAX_LEVELS
    assert _ref("bam")["participants"] == _ref("gamm4")["participants"] == 5000
    assert _ref("bam")["n"] == fit.n == 25000


def _check_smooth_row(ours, row, key: str) -> None:
    if key in RANDOM:
        assert ours.edf == pytest.approx(row["edf"], rel=0.01), key
    else:
        assert ours.edf == pytest.approx(row["edf"], abs=0.05), key
    assert pytest.approx(row["F"], rel=0.03) == ours.F, key
    assert ours.ref_df == pytest.approx(row["ref_df"], rel=0.03, abs=0.05), key
    assert (ours.p < 0.05) == (row["p"] < 0.05), (key, ours.p, row["p"])
    if row["p"] > 0.001:
        assert ours.p == pytest.approx(row["p"], rel=0.10), key


def test_smooth_table_equals_bam(fit):
    ref = _ref("bam")
    assert set(fit.smooth) == set(ref["smooth"])
    for key, row in ref["smooth"].items():
        _check_smooth_row(fit.smooth[key], row, key)


def test_parametric_aic_scale_reml_equal_bam(fit):
    ref = _ref("bam")
    mine, theirs = fit.parametric["(Intercept)"], ref["parametric"]["(Intercept)"]
    for field in ("estimate", "se", "t"):
        assert mine[field] == pytest.approx(theirs[field], rel=0.01), field
    assert fit.aic == pytest.approx(ref["aic"], rel=0.002)
    assert fit.scale == pytest.approx(ref["scale"], rel=0.01)
    assert fit.r_sq == pytest.approx(ref["r_sq"], abs=0.005)
    assert fit.dev_expl == pytest.approx(ref["dev_expl"], abs=0.005)
    assert fit.reml == pytest.approx(ref["reml"], abs=0.01)


@pytest.mark.parametrize("name", ["bam", "gamm4"])
def test_variance_components(fit, name):
    ref = _ref(name)["vcomp"]
    ours = vcomp(fit)
    for key in (*RANDOM, "scale"):
        assert ours.loc[key, "std_dev"] == pytest.approx(ref[key]["std_dev"], rel=0.01), key


def test_smooth_intercept_and_reml_equal_gamm4(fit):
    """gamm4's summary of s(x) takes its EDF as Ref.df where mgcv (and we) take the rank from
    EDF1, so F = statistic / Ref.df differs by that ratio; the statistic itself (F x Ref.df)
    is compared, at F's tolerance. lme4's REML criterion is -2 x mgcv's -REML score, both with
    the constant, and agrees within 0.02 (0.01 on the -REML scale)."""
    ref = _ref("gamm4")
    ours, row = fit.smooth["s(distance)"], ref["smooth"]["s(distance)"]
    assert ours.edf == pytest.approx(row["edf"], abs=0.05)
    assert row["ref_df"] == pytest.approx(row["edf"], rel=1e-9)
    assert pytest.approx(row["F"] * row["ref_df"], rel=0.03) == ours.F * ours.ref_df
    assert (ours.p < 0.05) == (row["p"] < 0.05)
    mine, theirs = fit.parametric["(Intercept)"], ref["parametric"]["(Intercept)"]
    for field in ("estimate", "se"):
        assert mine[field] == pytest.approx(theirs[field], rel=0.01), field
    assert fit.scale == pytest.approx(ref["scale"], rel=0.01)
    assert 2.0 * fit.reml == pytest.approx(ref["reml_criterion"], abs=0.02)
