"""A fixed-effects GAM of rating on distance with pygam, drawn beside the mixed model.

pygam fits penalized B-spline GAMs well (smoothing parameter by GCV over a grid) but has no
random effects, which is why the mixed model has its own REML fit; shown side by side, the two
curves tell the analyst how much the participant effects change the picture.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

LAMBDAS = np.logspace(-3, 3, 7)


def fit_fixed_gam(
    data: pd.DataFrame, outcome: str, distance: str, n_splines: int = 10, points: int = 100
) -> dict:
    """pygam ``LinearGAM(s(distance))``: EDF, p-value, AIC and the centred curve with its 95%
    band on an even grid (centred on the data mean, like the mixed model's smooth)."""
    from pygam import LinearGAM, s

    x = data[[distance]].to_numpy(dtype=float)
    y = data[outcome].to_numpy(dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gam = LinearGAM(s(0, n_splines=n_splines)).gridsearch(x, y, lam=LAMBDAS, progress=False)
        grid = np.linspace(x.min(), x.max(), points)[:, None]
        fit, band = gam.partial_dependence(term=0, X=grid, width=0.95)
        centre = float(np.mean(gam.partial_dependence(term=0, X=x)))
    return {
        "edf": float(gam.statistics_["edof"]),
        "p": float(gam.statistics_["p_values"][0]),
        "aic": float(gam.statistics_["AIC"]),
        "lam": float(np.ravel(gam.lam)[0]),
        "grid": {
            "x": grid[:, 0].tolist(),
            "fit": (fit - centre).tolist(),
            "lower": (band[:, 0] - centre).tolist(),
            "upper": (band[:, 1] - centre).tolist(),
        },
    }
