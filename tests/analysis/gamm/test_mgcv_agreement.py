"""Agreement with R's mgcv on committed fixtures (made by make_fixtures.sh / make_fixtures.R).

Tolerances are the issue's: EDF of s(x) within 0.05, random-effect EDFs within 1%, F within 3%,
p-values agree on significance at 0.05 and within 10% where above 0.001, AIC within 0.2%,
fitted values correlated above 0.9999.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.gamm import fit_gamm

FIXTURES = Path(__file__).parent / "fixtures"
CASES = sorted(p.name for p in FIXTURES.glob("mgcv_*.json"))


def _load(name: str) -> tuple[dict, pd.DataFrame]:
    ref = json.loads((FIXTURES / name).read_text())
    data = pd.read_csv(FIXTURES / f"study_{ref['study']}.csv", dtype={"participant": str})
    return ref, data


@pytest.fixture(scope="module", params=CASES)
def case(request):
    ref, data = _load(request.param)
    fit = fit_gamm(data, ref["outcome"], ref["distance"], "participant", basis=ref["basis"])
    return ref, fit


def test_fixtures_present():
    studies = {json.loads((FIXTURES / c).read_text())["study"] for c in CASES}
    assert len(CASES) >= 6 and {"null", "steep", "large"} <= studies
    assert any(json.loads((FIXTURES / c).read_text())["basis"] == "cr" for c in CASES)


def test_smooth_edf(case):
    ref, fit = case
    key = f"s({ref['distance']})"
    assert fit.smooth[key].edf == pytest.approx(ref["smooth"][key]["edf"], abs=0.05)


def test_random_effect_edfs(case):
    ref, fit = case
    for key in ("s(participant)", f"s(participant,{ref['distance']})"):
        assert fit.smooth[key].edf == pytest.approx(ref["smooth"][key]["edf"], rel=0.01), key


def test_f_statistics(case):
    ref, fit = case
    for key, row in ref["smooth"].items():
        assert pytest.approx(row["F"], rel=0.03) == fit.smooth[key].F, key


def test_reference_df(case):
    ref, fit = case
    for key, row in ref["smooth"].items():
        assert fit.smooth[key].ref_df == pytest.approx(row["ref_df"], rel=0.03, abs=0.05), key


def test_p_values(case):
    ref, fit = case
    for key, row in ref["smooth"].items():
        ours, theirs = fit.smooth[key].p, row["p"]
        assert (ours < 0.05) == (theirs < 0.05), (key, ours, theirs)
        if theirs > 0.001:
            assert ours == pytest.approx(theirs, rel=0.10), key
    ours = fit.parametric["(Intercept)"]["p"]
    assert (ours < 0.05) == (ref["parametric"]["(Intercept)"]["p"] < 0.05)


def test_parametric_table(case):
    ref, fit = case
    mine, theirs = fit.parametric["(Intercept)"], ref["parametric"]["(Intercept)"]
    for field in ("estimate", "se", "t"):
        assert mine[field] == pytest.approx(theirs[field], rel=0.01), field


def test_aic_scale_and_fit_measures(case):
    ref, fit = case
    assert fit.aic == pytest.approx(ref["aic"], rel=0.002)
    assert fit.scale == pytest.approx(ref["scale"], rel=0.01)
    assert fit.r_sq == pytest.approx(ref["r_sq"], abs=0.005)
    assert fit.dev_expl == pytest.approx(ref["dev_expl"], abs=0.005)
    assert fit.n == ref["n"]


def test_reml_score(case):
    """The -REML score itself, not only its optimum: equal because the basis columns (and with
    them log|S|) are mgcv's own; a smoothing parameter heading to infinity stops at a slightly
    different point in mgcv (the null study), which moves the score in the third decimal."""
    ref, fit = case
    assert fit.reml == pytest.approx(ref["reml"], abs=0.01)


def test_fitted_values(case):
    ref, fit = case
    theirs = np.asarray(ref["fitted"])
    assert np.corrcoef(fit.fitted, theirs)[0, 1] > 0.9999
    _, data = _load(next(c for c in CASES if json.loads((FIXTURES / c).read_text()) == ref))
    assert np.allclose(fit.predict(data), fit.fitted)


def test_smooth_prediction_band(case):
    ref, fit = case
    grid = ref["grid"]
    g = fit.smooth_grid(f"s({ref['distance']})", points=len(grid["x"]))
    assert np.allclose(g["x"], grid["x"])
    spread = np.ptp(grid["fit"]) + np.mean(grid["se"])
    assert np.max(np.abs(g["fit"] - np.asarray(grid["fit"]))) < 0.05 * spread
    assert np.asarray(g["se"]) == pytest.approx(np.asarray(grid["se"]), rel=0.10, abs=0.01)
