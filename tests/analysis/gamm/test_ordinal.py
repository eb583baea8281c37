"""The cumulative-logit additive mixed model against mgcv's ``ocat`` family and, in the limit
where it applies (no participant variation, a linear effect), statsmodels' OrderedModel.

mgcv reference: ``gam(y ~ s(x) + s(uid, bs = "re") + s(uid, x, bs = "re"),
family = ocat(R = 7), method = "REML")`` on the committed studies (make_ordinal_fixtures.R).

Tolerances. Where the optimum is interior, ours and mgcv's maximise the same Laplace-approximate
restricted likelihood and agree to about 1e-6 relative (EDFs to 4 decimals, linear predictors to
1e-8); the tolerances below allow 100-1000x that for BLAS and stopping-rule differences. Where a
smoothing parameter heads to infinity (s(x) in the null study: EDF -> 1) mgcv's outer Newton
stops earlier than ours (mgcv EDF 1.0036, ours 1.0001; its sp is then finite and ours much
larger), which moves that term's EDF, Ref.df and statistic in the third decimal and everything
else in the sixth; the s(x) tolerances (EDF within 0.01, statistic within 2%) cover that.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from statsmodels.miscmodels.ordinal_model import OrderedModel

from analysis.gamm import GammInputError, fit_gamm
from analysis.gamm.ordinal import fit_ordinal_gamm

FIXTURES = Path(__file__).parent / "fixtures"
CASES = [
    ("steep", "action", "sparsity"),
    ("null", "acceptance", "sparsity"),
    ("steep", "action", "proximity"),
    ("null", "acceptance", "proximity"),
]


@pytest.fixture(scope="module", params=CASES, ids=["_".join(c) for c in CASES])
def case(request):
    study, outcome, distance = request.param
    data = pd.read_csv(FIXTURES / f"study_{study}.csv", dtype={"participant": str})
    ref = json.loads((FIXTURES / f"ocat_mgcv_{study}_{outcome}_{distance}.json").read_text())
    fit = fit_ordinal_gamm(data, outcome, distance, "participant")
    return data, ref, fit


def test_thresholds_and_intercept(case):
    _, ref, fit = case
    assert fit.converged
    assert fit.thresholds[0] == -1.0  # mgcv's ocat convention
    assert np.allclose(fit.thresholds, ref["thresholds"], rtol=1e-3, atol=1e-3)
    assert fit.intercept == pytest.approx(ref["intercept"], abs=1e-3)


def test_smooth_terms(case):
    _, ref, fit = case
    label = fit.smooth_label
    for term, want in ref["smooth"].items():
        got = fit.smooth[term]
        if term == label:
            assert got.edf == pytest.approx(want["edf"], abs=0.01), term
            assert got.ref_df == pytest.approx(want["ref_df"], abs=0.02), term
            assert got.chi_sq == pytest.approx(want["chi_sq"], rel=0.02, abs=0.01), term
        else:
            assert got.edf == pytest.approx(want["edf"], rel=1e-3), term
            assert got.ref_df == pytest.approx(want["ref_df"], abs=0.5), term
            assert got.chi_sq == pytest.approx(want["chi_sq"], rel=1e-3), term
        # the conclusion: the same side of 5%, and close where it is not negligible
        assert (got.p < 0.05) == (want["p"] < 0.05), term
        if want["p"] > 1e-3:
            assert got.p == pytest.approx(want["p"], abs=0.01, rel=0.1), term
        else:
            assert got.p < 1e-3, term


def test_smoothing_parameters(case):
    """Both participant variance components (and the smooth's, where it is finite), after
    mgcv's penalty rescaling: sp_mgcv = lambda_ours * S.scale."""
    _, ref, fit = case
    labels = list(ref["smooth"])
    for j, term in enumerate(labels):
        if term == fit.smooth_label and ref["smooth"][term]["edf"] < 1.5:
            continue  # heading to infinity: mgcv stops earlier (module docstring)
        assert fit.sp[term] * ref["s_scale"][j] == pytest.approx(ref["sp"][j], rel=1e-3), term


def test_linear_predictor(case):
    _, ref, fit = case
    lp = np.asarray(ref["linear_predictors"])
    assert np.corrcoef(lp, fit.eta)[0, 1] > 0.999999
    assert np.max(np.abs(lp - fit.eta)) < 0.01


def test_laml_score(case):
    """Our -REML score differs from mgcv's only by the constant from how the spline penalty is
    scaled, which is the same for the Gaussian model on the same basis."""
    data, ref, fit = case
    study, outcome, distance = ref["study"], ref["outcome"], ref["distance"]
    gref = json.loads((FIXTURES / f"mgcv_{study}_{outcome}_{distance}_tp.json").read_text())
    gauss = fit_gamm(data, outcome, distance, "participant")
    assert fit.reml - ref["reml"] == pytest.approx(gauss.reml - gref["reml"], abs=0.01)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(5)
    n_part = 150
    part = np.repeat([f"p{i}" for i in range(n_part)], 5)
    x = rng.integers(1, 13, part.size).astype(float)
    latent = -0.35 * x + rng.logistic(size=part.size)
    cuts = np.array([-3.5, -2.7, -2.0, -1.3, -0.6, 0.2])
    y = 1 + np.searchsorted(cuts, latent)
    return pd.DataFrame({"participant": part, "x": x, "y": y})


def test_matches_ordered_logit_without_random_variation(data):
    fit = fit_ordinal_gamm(data, "y", "x", "participant")
    assert fit.converged
    ref = OrderedModel(data["y"], data[["x"]], distr="logit").fit(method="bfgs", disp=False)
    slope = ref.params["x"]
    cuts = ref.model.transform_threshold_params(ref.params)[1:-1]
    # the first cut point is fixed at -1 (mgcv's ocat): compare the spacings; eta carries the
    # intercept and the slope
    assert np.allclose(np.subtract(fit.thresholds, fit.thresholds[0]), cuts - cuts[0], atol=0.01)
    line = np.polyfit(data["x"], fit.eta, 1)
    assert line[0] == pytest.approx(slope, rel=0.01)
    assert fit.term.p < 1e-6
    assert fit.smooth_label == "s(x)"
    # no participant variation: both variance components shrink to (nearly) nothing
    assert fit.smooth["s(participant)"].edf < 5
    assert fit.smooth["s(participant,x)"].edf < 5


def test_needs_three_rating_values(data):
    two = data.assign(y=np.where(data["y"] > 3, 5, 2))
    with pytest.raises(GammInputError, match="at least three"):
        fit_ordinal_gamm(two, "y", "x", "participant")


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda d: d.assign(y=d["y"] + 0.5), "y"),
        (lambda d: d.assign(y=d["y"].where(d.index != 3, 9)), "y"),
        (lambda d: d.drop(columns="participant"), "participant"),
        (lambda d: d.assign(x=np.nan), "x"),
    ],
    ids=["non-integer", "out-of-range", "missing-column", "nan-distance"],
)
def test_bad_input(data, change, match):
    with pytest.raises(GammInputError, match=match):
        fit_ordinal_gamm(change(data), "y", "x", "participant")
