"""Comparing fitted models and reading more out of one, as mgcv's helpers do.

* ``anova_chisq(m0, m1)`` — ``anova.gam(m0, m1, test = "Chisq")``: the likelihood-ratio
  (analysis-of-deviance) test of nested fits. mgcv gives each model the residual df
  n - sum(edf1) - (sum(edf2) - sum(edf)), takes the deviance (RSS) difference over the larger
  model's scale and refers it to chi-square on the df difference. Use ML fits when the fixed
  effects differ (as ``itsadug::compareML`` insists); ``compare_ml`` gives that score-based
  version too (chi-square = difference of the ML scores, df = difference of the numbers of
  unpenalized coefficients and smoothing parameters). Like R's ``stat.anova`` it leaves p out
  (NaN) where the df difference is 0 or has the other sign than the deviance difference.
* ``why_no_lr_test(m0, m1, result)`` — R prints that table for any two fits, even with a
  negative df difference; a likelihood-ratio test means something only where m0's terms are
  part of m1's (nested) and m1 spends more effective degrees of freedom and fits closer. This
  says why not, or None where the test applies.
* ``vcomp(fit)`` — ``gam.vcomp``: each penalty as a variance component, sd = sqrt(scale /
  lambda) with the 95% interval from the Hessian of the REML/ML score in log lambda, log scale.
* ``k_check(fit)`` — ``k.check``: k', EDF, k-index (residual differences of neighbours in the
  covariate over the residual variance) and its randomisation p-value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from analysis.gamm.fit import GammFit
from analysis.gamm.formula import parse_formula
from analysis.gamm.reml import full_hessian
from analysis.gamm.validate import GammInputError


@dataclass
class AnovaResult:
    resid_df: tuple[float, float]
    resid_dev: tuple[float, float]
    df: float
    deviance: float
    p: float
    aic: tuple[float, float]

    def as_dict(self) -> dict:
        return {
            "resid_df": list(self.resid_df),
            "resid_dev": list(self.resid_dev),
            "df": self.df,
            "deviance": self.deviance,
            "p": self.p,
            "aic": list(self.aic),
        }


def _resid_df(fit: GammFit) -> float:
    return fit.n - sum(fit.edf1.values()) - (fit.edf2_total - sum(fit.edf.values()))


def _rss(fit: GammFit) -> float:
    r = fit.design.y - fit.fitted
    return float(r @ r)


def anova_chisq(m0: GammFit, m1: GammFit) -> AnovaResult:
    """mgcv's ``anova(m0, m1, test = "Chisq")`` for two Gaussian fits of the same data."""
    if m0.n != m1.n or not np.allclose(m0.design.y, m1.design.y):
        raise GammInputError("anova: the models were not fitted to the same outcome values")
    rdf = (_resid_df(m0), _resid_df(m1))
    dev = (_rss(m0), _rss(m1))
    big = m0 if rdf[0] < rdf[1] else m1
    df = rdf[0] - rdf[1]
    deviance = dev[0] - dev[1]
    signed = deviance / big.scale * np.sign(df)  # stat.anova: NA for df 0 or opposite signs
    p = float(stats.chi2.sf(signed, abs(df))) if df != 0 and signed >= 0 else float("nan")
    return AnovaResult(rdf, dev, float(df), float(deviance), p, (m0.aic, m1.aic))


def nesting_problem(m0: GammFit, m1: GammFit) -> str | None:
    """Why m0's formula is not a special case of m1's, or None where it is.

    Conservative, by the terms alone: m1 must hold each parametric and random-effect term of
    m0, and each smooth of m0 with the same covariate, basis and k, either as it is or as a
    smooth by a factor that m1 also has as a term (a common smooth is one centred smooth per
    level all alike, plus the level's intercept)."""
    small, big = parse_formula(m0.formula), parse_formula(m1.formula)
    if small.outcome != big.outcome:
        return f"the outcomes differ ({small.outcome} and {big.outcome})"
    missing = [t for t in small.parametric if t not in big.parametric]
    missing += [r.label for r in small.random_effects if r not in big.random_effects]
    for sm in small.smooths:
        alike = [
            t
            for t in big.smooths
            if (t.variable, t.basis, t.k) == (sm.variable, sm.basis, sm.k)
            and (t.by == sm.by or (sm.by is None and t.by in big.parametric))
        ]
        if not alike:
            missing.append(f"{sm.label}:{sm.by}" if sm.by else sm.label)
    if missing:
        return f"`{m1.formula}` lacks {', '.join(missing)} of `{m0.formula}`"
    return None


def why_no_lr_test(m0: GammFit, m1: GammFit, result: AnovaResult) -> str | None:
    """Why the likelihood-ratio test of m0 against m1 does not apply, or None where it does:
    m0 nested in m1, m1 with more effective degrees of freedom (df difference > 0) and a
    smaller deviance. Where R's table still shows a p-value (a negative df difference with a
    negative deviance difference), it tests the models the wrong way round."""
    nesting = nesting_problem(m0, m1)
    if nesting is not None:
        return f"the models are not nested: {nesting}"
    if result.df <= 0:
        return (
            f"the larger model uses no more effective degrees of freedom than the smaller one "
            f"(difference {result.df:.2f})"
        )
    if result.deviance <= 0:
        return (
            f"the larger model fits no closer than the smaller one "
            f"(deviance difference {result.deviance:.2f})"
        )
    return None


def compare_ml(m0: GammFit, m1: GammFit) -> dict:
    """itsadug's ``compareML``: chi-square = ML score difference, df = difference of the
    counts of unpenalized coefficients plus smoothing parameters (both must be ML fits)."""
    for m in (m0, m1):
        if m.design.meta.get("method") != "ML":
            raise GammInputError("compare_ml needs two fits with method='ML'")

    def ndf(m: GammFit) -> int:
        return m.design.null_space_dim + m.design.n_lambda

    diff = m0.reml - m1.reml
    d_df = ndf(m1) - ndf(m0)
    p = float(stats.chi2.sf(abs(diff), abs(d_df))) if d_df else float("nan")
    return {"ml": [m0.reml, m1.reml], "edf": [ndf(m0), ndf(m1)], "chisq": diff, "df": d_df, "p": p}


def vcomp(fit: GammFit, level: float = 0.95) -> pd.DataFrame:
    """gam.vcomp: standard deviation of each penalty's random effect and of the residual."""
    labels = [t.label for t in fit.design.terms if t.lambda_index is not None]
    lam = np.exp(fit.state.rho)
    vc = np.append(fit.scale / lam, fit.scale)
    h = full_hessian(fit.state, fit.design)
    m = h.shape[0]
    j = np.zeros((m, m))
    j[np.diag_indices(m)] = -0.5
    j[:, -1] = 0.5
    vals, vecs = np.linalg.eigh(h)
    keep = vals > vals.max() * np.finfo(float).eps ** 0.75
    inv = np.zeros_like(vals)
    inv[keep] = 1.0 / vals[keep]
    v = j @ ((vecs * inv) @ vecs.T) @ j.T
    lsd = np.log(np.sqrt(vc))
    sd_lsd = np.sqrt(np.maximum(np.diag(v), 0.0))
    crit = stats.norm.ppf(1 - (1 - level) / 2)
    with np.errstate(over="ignore"):  # a term at its bound has an unbounded interval
        return pd.DataFrame(
            {
                "std_dev": np.exp(lsd),
                "lower": np.exp(lsd - crit * sd_lsd),
                "upper": np.exp(lsd + crit * sd_lsd),
            },
            index=[*labels, "scale"],
        )


def k_check(fit: GammFit, n_rep: int = 400, seed: int = 1) -> pd.DataFrame:
    """k.check: per smooth k', EDF, k-index and p-value (NaN for random effects, as mgcv).

    The p-value is the share of ``n_rep`` random reorderings of the residuals whose k-index
    falls below the observed one; it comes from numpy's generator seeded with ``seed``, so it
    equals mgcv's only in distribution (mgcv draws with R's RNG).
    """
    rsd = fit.design.y - fit.fitted
    rng = np.random.default_rng(seed)
    rows = {}
    for t in fit.design.terms:
        if t.lambda_index is None:
            continue
        edf = fit.edf[t.label]
        if t.kind != "smooth":
            rows[t.label] = (t.n_coef, edf, np.nan, np.nan)
            continue
        x = fit.design.meta["smooth_data"][t.label]
        e = np.diff(rsd[np.argsort(x, kind="stable")])
        v_obs = float(np.mean(e**2) / 2)
        ve = np.empty(n_rep)
        for i in range(n_rep):
            ve[i] = np.mean(np.diff(rng.permutation(rsd)) ** 2) / 2
        rows[t.label] = (t.n_coef, edf, v_obs / float(np.mean(rsd**2)), float(np.mean(ve < v_obs)))
    return pd.DataFrame.from_dict(rows, orient="index", columns=["k'", "edf", "k-index", "p-value"])
