"""Cumulative-logit (ordered categorical) GAMM of 1..7 ratings: the robustness check.

P(y <= c) = logistic(theta_c - eta), eta = intercept + s(distance) + b0_participant
+ b1_participant * distance, theta_1 = 0 (the intercept carries the location). Fitted by
penalized quasi-likelihood (Breslow & Clayton 1993; the "performance iteration" of Wood's
GAMM book): each step forms the IRLS working response and weights of the ordinal likelihood at
the current (theta, eta), fits that weighted Gaussian model with known scale 1 by REML with the
same structured solver as the Gaussian model (so the random-effect blocks stay O(n)), and then
updates the thresholds by maximum likelihood given eta. statsmodels' OrderedModel has neither
penalized smooths nor random effects, hence our own; we use it for nothing here but the same
logistic link. The smooth is tested with Wood's (2013) statistic against its chi-square
reference (scale known).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize, stats
from scipy.special import expit

from analysis.gamm.chisq import mixture_sf
from analysis.gamm.design import Design, RandomEffect, Smooth, build_design
from analysis.gamm.fit import GammFit, fit_gamm
from analysis.gamm.linalg import cross_products
from analysis.gamm.reml import fit_reml
from analysis.gamm.validate import (
    GammInputError,
    check_basis,
    group_column,
    rating_column,
    require_columns,
    smooth_covariate,
)


@dataclass
class OrdinalFit:
    n: int
    categories: list[int]
    thresholds: list[float]
    smooth_label: str
    edf: float
    ref_df: float
    chi_sq: float
    p: float
    iterations: int
    converged: bool
    eta: np.ndarray

    def summary_dict(self) -> dict:
        return {
            "n": self.n,
            "categories": self.categories,
            "thresholds": self.thresholds,
            "smooth": {
                self.smooth_label: {
                    "edf": self.edf,
                    "ref_df": self.ref_df,
                    "chi_sq": self.chi_sq,
                    "p": self.p,
                }
            },
            "iterations": self.iterations,
            "converged": self.converged,
        }


def _cuts(theta: np.ndarray) -> np.ndarray:
    return np.concatenate([[-np.inf], theta, [np.inf]])


def _derivatives(codes: np.ndarray, theta: np.ndarray, eta: np.ndarray):
    """log-likelihood, d/d eta and -d2/d eta2 of each observation."""
    cuts = _cuts(theta)
    a = cuts[codes + 1] - eta
    b = cuts[codes] - eta
    fa, fb = expit(a), expit(b)
    prob = np.maximum(fa - fb, 1e-300)
    da, db = fa * (1 - fa), fb * (1 - fb)
    dda, ddb = da * (1 - 2 * fa), db * (1 - 2 * fb)
    grad = -(da - db) / prob
    second = (dda - ddb) / prob - grad**2
    return np.log(prob), grad, np.maximum(-second, 1e-10)


def _fit_thresholds(codes: np.ndarray, eta: np.ndarray, theta0: np.ndarray) -> np.ndarray:
    """ML thresholds given eta (all free, kept ordered through positive increments)."""

    def unpack(par: np.ndarray) -> np.ndarray:
        return par[0] + np.concatenate([[0.0], np.cumsum(np.exp(par[1:]))])

    def nll(par: np.ndarray) -> float:
        return -float(np.sum(_derivatives(codes, unpack(par), eta)[0]))

    start = np.concatenate([[theta0[0]], np.log(np.maximum(np.diff(theta0), 1e-3))])
    res = optimize.minimize(nll, start, method="BFGS")
    return unpack(res.x)


def _penalty(design: Design, lam: np.ndarray, beta_f: np.ndarray, beta_r: np.ndarray) -> float:
    total = 0.0
    for t in design.terms:
        if t.lambda_index is None:
            continue
        if t.fixed_slice is not None:
            b = beta_f[t.fixed_slice]
            total += lam[t.lambda_index] * float(b @ t.penalty @ b)
        else:
            total += lam[t.lambda_index] * float(np.sum(beta_r[:, t.random_index] ** 2))
    return total


def _smooth_chisq_test(coef, xtx, vp, rank) -> tuple[float, float, float]:
    """Wood's (2013) test with known scale (chi-square / chi-square mixture reference)."""
    r_fac = np.linalg.cholesky(xtx).T
    v = r_fac @ vp @ r_fac.T
    vals, vecs = np.linalg.eigh((v + v.T) / 2.0)
    vals, vecs = vals[::-1], vecs[:, ::-1]
    k = max(1, int(np.floor(rank)))
    nu = rank - np.floor(rank)
    keep = vals > vals.max() * np.finfo(float).eps ** 0.9
    k = min(k, int(keep.sum()))
    rp = r_fac @ coef
    proj = vecs.T @ rp
    if nu > 0.05 and k + 1 <= keep.sum():
        # fractional rank: weights 1 for the leading k directions, nu for the next one
        stat = float(np.sum(proj[:k] ** 2 / vals[:k]) + nu * proj[k] ** 2 / vals[k])
        weights = np.concatenate([np.ones(k), [nu]])
        return stat, float(rank), mixture_sf(stat, weights)
    stat = float(np.sum(proj[:k] ** 2 / vals[:k]))
    return stat, float(k), float(stats.chi2.sf(stat, k))


def fit_ordinal_gamm(
    data: pd.DataFrame,
    outcome: str,
    distance: str,
    participant: str,
    basis: str = "tp",
    k: int = 10,
    max_iter: int = 60,
    gaussian: GammFit | None = None,
) -> OrdinalFit:
    """Cumulative-logit GAMM with the Gaussian model's terms (see module docstring)."""
    check_basis(basis, k)
    require_columns(data, [outcome, distance, participant])
    clean = pd.DataFrame(
        {
            outcome: rating_column(data, outcome),
            distance: smooth_covariate(data, distance, k),
            participant: group_column(data, participant),
        }
    ).reset_index(drop=True)
    categories = sorted(int(v) for v in np.unique(clean[outcome]))
    if len(categories) < 3:
        raise GammInputError(
            f"data: column {outcome!r} uses {len(categories)} rating values; "
            "an ordinal fit needs at least three"
        )
    codes = np.searchsorted(categories, clean[outcome].to_numpy()).astype(int)
    smooths = [Smooth(distance, basis, k)]
    res = [RandomEffect(participant), RandomEffect(participant, distance)]
    base = build_design(clean, outcome, smooths, res)
    cum = np.cumsum(np.bincount(codes, minlength=len(categories)))[:-1] / codes.size
    logits = np.log(cum / (1 - cum))
    theta = logits - logits[0]
    eta = np.full(codes.size, -logits[0])
    if gaussian is None:
        gaussian = fit_gamm(data, outcome, distance, participant, basis, k)
    # random-effect variances: the Gaussian model's, put on the latent logistic scale
    # (residual variance pi^2/3 there, scale phi = 1 in the working model)
    rho = np.zeros(base.n_lambda)
    hold = np.zeros(base.n_lambda, dtype=bool)
    for t in base.terms:
        if t.lambda_index is None:
            continue
        sp = gaussian.sp[t.label]
        if t.kind == "random":
            rho[t.lambda_index] = np.log(sp * 3.0 / np.pi**2)
            hold[t.lambda_index] = True
        else:
            rho[t.lambda_index] = np.log(sp / gaussian.scale)
    converged = False
    iterations = 0
    state = None
    weighted = base
    beta_f = np.zeros(base.p_fixed)
    beta_f[0] = eta[0]
    beta_r = np.zeros((base.n_groups, base.n_random_terms))

    def linear(bf: np.ndarray, br: np.ndarray) -> np.ndarray:
        return base.xf @ bf + np.sum(br[base.group_codes] * base.random_cov, axis=1)

    def objective(bf: np.ndarray, br: np.ndarray, lam: np.ndarray) -> float:
        """Penalized log-likelihood, the quantity each P-IRLS step must not decrease."""
        loglik = float(np.sum(_derivatives(codes, theta, linear(bf, br))[0]))
        return loglik - 0.5 * _penalty(base, lam, bf, br)

    while iterations < max_iter:
        iterations += 1
        _, grad, w = _derivatives(codes, theta, eta)
        z = eta + grad / w
        sw = np.sqrt(w)
        weighted = Design(
            z * sw,
            base.xf * sw[:, None],
            base.terms,
            base.group_codes,
            base.n_groups,
            base.random_cov * sw[:, None],
            base.blocked_factor,
            base.n_lambda,
        )
        cp = cross_products(weighted)
        state, _, _ = fit_reml(weighted, cp, known_scale=1.0, start=rho, hold=hold)
        rho = state.rho
        lam = np.exp(rho)
        # step halving: participants who always give the same rating make full steps overshoot
        new_f, new_r = state.beta_f, state.beta_r
        base_value = objective(beta_f, beta_r, lam)
        for _ in range(30):
            if objective(new_f, new_r, lam) >= base_value - 1e-9 * abs(base_value):
                break
            new_f, new_r = (beta_f + new_f) / 2.0, (beta_r + new_r) / 2.0
        theta = _fit_thresholds(codes, linear(new_f, new_r), theta)
        # keep theta_1 = 0: its shift moves into the intercept, which converges faster than
        # holding theta_1 fixed while the other thresholds move
        new_f = new_f.copy()
        new_f[0] -= theta[0]
        theta = theta - theta[0]
        new_eta = linear(new_f, new_r)
        change = float(np.max(np.abs(new_eta - eta)))
        beta_f, beta_r, eta = new_f, new_r, new_eta
        if change < 1e-5:
            converged = True
            break
    term = next(t for t in base.terms if t.kind == "smooth")
    sl = term.fixed_slice
    j = term.lambda_index
    edf = float(term.n_coef - state.traces[j])
    edf1 = float(term.n_coef - np.sum(state.frob[j]))
    cp = cross_products(weighted)
    chi_sq, ref_df, p = _smooth_chisq_test(
        state.beta_f[sl], cp.a[sl, sl], state.fac.p[sl, sl], min(term.n_coef, edf1)
    )
    return OrdinalFit(
        n=int(codes.size),
        categories=categories,
        thresholds=[float(t) for t in theta],
        smooth_label=term.label,
        edf=edf,
        ref_df=ref_df,
        chi_sq=chi_sq,
        p=float(p),
        iterations=iterations,
        converged=converged,
        eta=eta,
    )


def compare_with_gaussian(evaluations, gaussian_fits, participant, basis, k, progress) -> dict:
    """Ordinal fit of each seed model; flags where the 5% conclusion on s(distance) differs."""
    from tqdm import tqdm

    out = {}
    with tqdm(gaussian_fits, desc="ordinal", unit="model", disable=not progress) as bar:
        for spec, gfit in bar:
            ofit = fit_ordinal_gamm(
                evaluations, spec.outcome, spec.distance, participant, basis, k, gaussian=gfit
            )
            label = f"s({spec.distance})"
            g = gfit.smooth[label]
            g_sig, o_sig = g.p < 0.05, ofit.p < 0.05
            g_slope = _direction(gfit.smooth_grid(label))
            o_slope = _ordinal_direction(ofit, evaluations[spec.distance])
            agree = g_sig == o_sig and (not g_sig or g_slope == o_slope)
            out[spec.name] = {
                "outcome": spec.outcome,
                "distance": spec.distance,
                "gaussian": {"edf": g.edf, "F": g.F, "p": g.p, "direction": g_slope},
                "ordinal": {
                    **ofit.summary_dict()["smooth"][label],
                    "direction": o_slope,
                    "converged": ofit.converged,
                },
                "same_conclusion": bool(agree),
                "note": _note(g_sig, o_sig, g_slope, o_slope),
            }
    return out


def _direction(grid: pd.DataFrame) -> str:
    change = float(grid["fit"].iloc[-1] - grid["fit"].iloc[0])
    return "decreasing" if change < 0 else "increasing"


def _ordinal_direction(fit: OrdinalFit, x: pd.Series) -> str:
    # eta at the largest vs the smallest distance, averaged over what else is in eta
    xv = x.to_numpy(dtype=float)
    lo, hi = xv <= np.quantile(xv, 0.1), xv >= np.quantile(xv, 0.9)
    return "decreasing" if fit.eta[hi].mean() < fit.eta[lo].mean() else "increasing"


def _note(g_sig: bool, o_sig: bool, g_dir: str, o_dir: str) -> str:
    if g_sig and o_sig:
        if g_dir == o_dir:
            return f"both models find an effect ({g_dir})"
        return f"both find an effect but in opposite directions ({g_dir} vs {o_dir})"
    if not g_sig and not o_sig:
        return "neither model finds an effect at the 5% level"
    if g_sig:
        return "the Gaussian model finds an effect at 5%, the ordinal model does not"
    return "the ordinal model finds an effect at 5%, the Gaussian model does not"
