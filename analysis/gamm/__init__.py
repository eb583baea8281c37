"""Generalized additive mixed models of ratings on recourse distance, matching R's mgcv.

    from analysis.gamm import fit_gamm, GammFit
    fit = fit_gamm(data, outcome="action", distance="sparsity", participant="participant")
    fit.summary_dict()          # mgcv's summary numbers (the `gamm` CLI's JSON)
    fit.predict(data)           # fitted means, with or without participant effects

``fit_additive_mixed`` fits any number of smooths and random-effect terms (``Smooth``,
``RandomEffect``). See docs/gamm.md.
"""

from analysis.gamm.design import RandomEffect, Smooth
from analysis.gamm.fit import GammFit, fit_additive_mixed, fit_gamm
from analysis.gamm.validate import GammInputError

__all__ = ["GammFit", "GammInputError", "RandomEffect", "Smooth", "fit_additive_mixed", "fit_gamm"]
