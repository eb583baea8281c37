"""Imhof's inversion against closed forms and against mgcv's psum.chisq (Davies' algorithm)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from analysis.gamm.chisq import f_ratio_mixture_sf, mixture_sf

REFERENCE = json.loads((Path(__file__).parent / "fixtures" / "psum_chisq.json").read_text())


@pytest.mark.parametrize("x,df", [(0.5, 1), (3.0, 3), (20.0, 9), (60.0, 30)])
def test_equal_weights_is_chi_square(x, df):
    assert mixture_sf(x, np.ones(df)) == pytest.approx(stats.chi2.sf(x, df), abs=2e-6)


@pytest.mark.parametrize("f,d1,d2", [(4 / 3, 3, 40), (2.5, 5, 1000), (0.3, 2, 100)])
def test_negative_weight_gives_f_distribution(f, d1, d2):
    assert f_ratio_mixture_sf(f * d1, np.ones(d1), d2) == pytest.approx(
        stats.f.sf(f, d1, d2), abs=2e-6
    )


@pytest.mark.parametrize("case", REFERENCE, ids=lambda c: f"{len(c['lb'])}-weights")
def test_matches_mgcv_davies(case):
    ours = mixture_sf(case["q"], np.asarray(case["lb"]), np.asarray(case["df"]))
    # Davies' algorithm is run by mgcv with an accuracy of 2e-5
    assert ours == pytest.approx(case["p"], abs=5e-5)
