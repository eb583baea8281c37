"""Generalized additive mixed models of ratings on recourse distance, matching R's mgcv.

    from analysis.gamm import fit_gamm, GammFit
    fit = fit_gamm(data, outcome="action", distance="sparsity", participant="participant")
    fit = fit_gamm("action ~ strategy + s(proximity, by = strategy) + s(uid, bs = 're')", data)
    fit.summary_dict()          # mgcv's summary numbers (the `gamm` CLI's JSON)
    fit.predict(data)           # fitted means, with or without participant effects
    fit.predict_se(new, exclude=["s(uid)"])   # predict.gam(..., se.fit = TRUE)

``fit_additive_mixed`` fits any number of parametric terms, smooths and random-effect terms
(``Smooth``, ``RandomEffect``); ``analysis.gamm.compare`` holds anova (likelihood ratio),
gam.vcomp and k.check. See docs/gamm.md.
"""

from analysis.gamm.compare import (
    anova_chisq,
    compare_ml,
    k_check,
    nesting_problem,
    vcomp,
    why_no_lr_test,
)
from analysis.gamm.design import RandomEffect, Smooth
from analysis.gamm.fit import GammFit, fit_additive_mixed, fit_formula, fit_gamm
from analysis.gamm.formula import parse_formula
from analysis.gamm.validate import GammInputError

__all__ = [
    "GammFit",
    "GammInputError",
    "RandomEffect",
    "Smooth",
    "anova_chisq",
    "compare_ml",
    "fit_additive_mixed",
    "fit_formula",
    "fit_gamm",
    "k_check",
    "nesting_problem",
    "parse_formula",
    "vcomp",
    "why_no_lr_test",
]
