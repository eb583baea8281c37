"""The cumulative-logit fit against statsmodels' OrderedModel in the limit where it applies:
no participant variation and a linear effect of distance (the smooth shrinks to a line)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.miscmodels.ordinal_model import OrderedModel

from analysis.gamm import GammInputError
from analysis.gamm.ordinal import fit_ordinal_gamm


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
    # our thresholds are relative to the first; eta carries intercept and slope
    assert np.allclose(fit.thresholds, cuts - cuts[0], atol=0.01)
    line = np.polyfit(data["x"], fit.eta, 1)
    assert line[0] == pytest.approx(slope, rel=0.01)
    assert fit.p < 1e-6
    assert fit.smooth_label == "s(x)"


def test_needs_three_rating_values(data):
    two = data.assign(y=np.where(data["y"] > 3, 5, 2))
    with pytest.raises(GammInputError, match="at least three"):
        fit_ordinal_gamm(two, "y", "x", "participant")
