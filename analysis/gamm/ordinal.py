"""Cumulative-logit (ordered categorical) additive mixed model of 1..7 ratings: the robustness
check of the Gaussian GAMM, with the same terms and mgcv's ``ocat`` parameterisation.

    P(y <= c) = logistic(alpha_c - eta),  eta = intercept + s(distance) + b0_participant
                + b1_participant * distance,  alpha_1 = -1 < alpha_2 < ... < alpha_{R-1},

alpha_1 fixed at -1 as mgcv's ``ocat`` fixes it (the intercept carries the location), the other
cut points parameterised as mgcv does, alpha_{c+1} = alpha_c + exp(theta_c). Estimation is
mgcv's for extended families (Wood, Pya & Saefken 2016, JASA 111:1548):

* inner: penalized Newton on the coefficients for fixed (theta, log lambda). The Hessian of the
  ordinal log-likelihood with respect to eta is diagonal (W), so X'WX + S_lambda has the
  Gaussian model's participant block-diagonal structure and is factorised by ``linalg.py``'s
  block elimination, O(n);
* outer: the cut-point parameters theta and the three log smoothing parameters (the smooth's
  and both random-effect variances) minimise the Laplace-approximate restricted likelihood

      V = -l(beta_hat) + beta_hat'S_lambda beta_hat / 2 + log|X'WX + S_lambda| / 2
          - log|S_lambda|_+ / 2 - M_p/2 log(2 pi),

  W = -d2l/deta2 the observed information at beta_hat, l the ordinal log-likelihood (the
  scale is 1). The gradient in (log lambda, theta) is exact: implicit differentiation of
  beta_hat, including the dependence of W on eta through the third derivative of l and on the
  cut points directly. Newton's method runs on it with the Hessian from forward differences of
  that gradient (eight parameters: 3 log lambda, 5 theta for 7 categories).

With 1,738 ratings of 362 participants a fit (tests included) takes 0.4-0.8 s on this 2-core
machine (6-10 outer iterations); with 9,600 ratings of 2,000 participants about 5 s, half of it
the random-effect tests (two 2,000 x 2,000 eigenproblems).

EDFs are mgcv's (diagonal of (X'WX + S)^{-1} X'WX summed over a term); the smooth is tested with
Wood's (2013a) statistic and the participant terms with Wood's (2013b) test, both with the scale
known (chi-square references), as mgcv's ``summary`` does for ``ocat``. Checked against mgcv
1.8-41's ``gam(..., family = ocat(R = 7), method = "REML")`` on the committed studies
(``tests/analysis/gamm/test_ordinal.py``; numbers in docs/gamm.md). statsmodels' OrderedModel
has neither penalized smooths nor random effects; it is the reference only in the limit without
participant variation.

The criterion and its gradient are in ``ordinal_laml``; this module fits, tests and compares.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from analysis.gamm import inference as inf
from analysis.gamm.design import RandomEffect, Smooth, build_design
from analysis.gamm.fit import BLAS_THREADS, logdet_s_constant
from analysis.gamm.linalg import InverseBlocks
from analysis.gamm.ordinal_laml import FIRST_CUT, InnerFit, OrdinalLaml, cut_points, derivatives
from analysis.gamm.re_test import random_effect_test_blocked
from analysis.gamm.reml import RHO_MAX, RHO_MIN, initial_rho
from analysis.gamm.validate import (
    GammInputError,
    check_basis,
    group_column,
    rating_column,
    require_columns,
    smooth_covariate,
)

THETA_MIN, THETA_MAX = -12.0, 6.0  # log spacing of neighbouring cut points
GRAD_TOL = 1e-8  # outer convergence: |dV/dpsi| < GRAD_TOL (1 + |V|)
FD_STEP = 1e-5  # forward-difference step for the outer Hessian
MAX_STEP = 3.0  # largest outer Newton step in any log lambda or theta


@dataclass
class OrdinalTerm:
    edf: float
    ref_df: float
    chi_sq: float
    p: float


@dataclass
class OrdinalFit:
    n: int
    categories: list[int]
    thresholds: list[float]  # alpha_1 = -1 < ... < alpha_{R-1} (mgcv's ocat cut points)
    intercept: float
    smooth_label: str
    smooth: dict[str, OrdinalTerm]  # every penalized term, mgcv's summary table
    sp: dict[str, float]
    reml: float
    iterations: int
    converged: bool
    eta: np.ndarray
    seconds: float

    @property
    def term(self) -> OrdinalTerm:
        """The summary row of the distance smooth (`smooth_label`)."""
        return self.smooth[self.smooth_label]

    def summary_dict(self) -> dict:
        return {
            "n": self.n,
            "categories": self.categories,
            "thresholds": self.thresholds,
            "intercept": self.intercept,
            "smooth": {
                k: {"edf": v.edf, "ref_df": v.ref_df, "chi_sq": v.chi_sq, "p": v.p}
                for k, v in self.smooth.items()
            },
            "sp": dict(self.sp),
            "reml": self.reml,
            "iterations": self.iterations,
            "converged": self.converged,
        }


def _start(codes: np.ndarray, n_cat: int) -> tuple[np.ndarray, float]:
    """theta and intercept of the model without covariates (marginal category frequencies)."""
    cum = np.cumsum(np.bincount(codes, minlength=n_cat))[:-1] / codes.size
    cum = np.clip(cum, 1e-4, 1 - 1e-4)
    logits = np.log(cum / (1 - cum))
    intercept = FIRST_CUT - logits[0]
    alpha = logits + intercept
    theta = np.log(np.maximum(np.diff(alpha), 1e-3))
    return theta, intercept


def fit_ordinal_gamm(
    data: pd.DataFrame,
    outcome: str,
    distance: str,
    participant: str,
    basis: str = "tp",
    k: int = 10,
    max_iter: int = 100,
) -> OrdinalFit:
    """Cumulative-logit GAMM with the Gaussian model's terms (see module docstring)."""
    t0 = time.perf_counter()
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
    n_cat = len(categories)
    codes = np.searchsorted(categories, clean[outcome].to_numpy()).astype(int)
    design = build_design(
        clean,
        outcome,
        [Smooth(distance, basis, k)],
        [RandomEffect(participant), RandomEffect(participant, distance)],
    )
    theta0, intercept0 = _start(codes, n_cat)
    beta_f0 = np.zeros(design.p_fixed)
    beta_f0[0] = intercept0
    with threadpool_limits(limits=BLAS_THREADS):
        laml = OrdinalLaml(design, codes, n_cat, beta_f0)
        # smoothing parameters start where each penalty matches its block of X'WX at the start
        der0 = derivatives(codes, cut_points(theta0), np.full(codes.size, intercept0))
        rho0 = initial_rho(design, laml.cross_products(der0.w, np.zeros(codes.size)))
        m = design.n_lambda
        lo = np.concatenate([np.full(m, RHO_MIN), np.full(theta0.size, THETA_MIN)])
        hi = np.concatenate([np.full(m, RHO_MAX), np.full(theta0.size, THETA_MAX)])
        psi, value, st, iterations, converged = _outer_newton(
            laml, np.concatenate([rho0, theta0]), lo, hi, max_iter
        )
        rho, theta = psi[:m], psi[m:]
        lam = np.exp(rho)
        blocks = InverseBlocks(design, st.fac, lam)
        terms = [laml.pen_terms[j] for j in range(m)]
        traces = np.array([blocks.trace(t) for t in terms])
        frob = np.array([[blocks.frob2(ti, tj) for tj in terms] for ti in terms])
        edfs = inf.term_edfs(design, traces, frob)
        smooth = {}
        for t in design.terms:
            if t.kind == "smooth":
                tr = inf.smooth_term_test(
                    t, st.beta_f, st.cp.a, st.fac.p, 1.0, edfs[t.label][1], -1.0
                )
            elif t.kind == "random":
                tr = random_effect_test_blocked(
                    design, t, st.cp, st.fac, lam, st.beta_r, 1.0, -1.0, known_scale=True
                )
            else:
                continue
            smooth[t.label] = OrdinalTerm(edfs[t.label][0], tr.ref_df, tr.stat * tr.ref_df, tr.p)
    label = next(t.label for t in design.terms if t.kind == "smooth")
    reml = value + logdet_s_constant(design) - design.null_space_dim / 2.0 * np.log(2 * np.pi)
    return OrdinalFit(
        n=int(codes.size),
        categories=categories,
        thresholds=[float(a) for a in cut_points(theta)],
        intercept=float(st.beta_f[0]),
        smooth_label=label,
        smooth=smooth,
        sp={t.label: float(lam[t.lambda_index]) for t in terms},
        reml=float(reml),
        iterations=iterations,
        converged=converged,
        eta=st.eta,
        seconds=time.perf_counter() - t0,
    )


def _outer_newton(
    laml: OrdinalLaml, psi: np.ndarray, lo: np.ndarray, hi: np.ndarray, max_iter: int
) -> tuple[np.ndarray, float, InnerFit, int, bool]:
    """Minimise V over psi = (log lambda, theta) by Newton's method with the Hessian from
    forward differences of the exact gradient (eigenvalues made positive, steps capped and
    halved until V decreases); parameters at a bound with the gradient pointing outwards stay
    there. Returns (psi, V, inner fit, iterations, converged)."""
    psi = np.clip(psi, lo, hi)
    value, grad, st = laml.value_and_grad(psi)
    for it in range(1, max_iter + 1):
        free = ~(((psi >= hi - 1e-8) & (grad < 0)) | ((psi <= lo + 1e-8) & (grad > 0)))
        tol = GRAD_TOL * (1.0 + abs(value))
        if not np.any(free) or np.max(np.abs(grad[free])) < tol:
            return psi, value, st, it, st.converged
        idx = np.flatnonzero(free)
        hess = np.empty((idx.size, idx.size))
        for c, k in enumerate(idx):
            laml.warm_start(st)
            step = np.zeros_like(psi)
            step[k] = FD_STEP if psi[k] + FD_STEP <= hi[k] else -FD_STEP
            hess[:, c] = (laml.value_and_grad(psi + step)[1][idx] - grad[idx]) / step[k]
        hess = (hess + hess.T) / 2.0
        vals, vecs = np.linalg.eigh(hess)
        vals = np.maximum(np.abs(vals), max(np.max(np.abs(vals)) * 1e-7, 1e-10))
        delta = np.zeros_like(psi)
        delta[idx] = -vecs @ ((vecs.T @ grad[idx]) / vals)
        biggest = np.max(np.abs(delta))
        if biggest > MAX_STEP:
            delta *= MAX_STEP / biggest
        accepted = False
        for _ in range(30):
            laml.warm_start(st)
            trial = np.clip(psi + delta, lo, hi)
            t_value, t_grad, t_st = laml.value_and_grad(trial)
            if t_st.converged and t_value <= value + 1e-12 * abs(value):
                accepted = True
                break
            delta /= 2.0
        if not accepted:
            laml.warm_start(st)
            return psi, value, st, it, bool(np.max(np.abs(grad[free])) < 100 * tol)
        small = abs(t_value - value) < 1e-12 * (1.0 + abs(value))
        psi, value, grad, st = trial, t_value, t_grad, t_st
        if small and np.max(np.abs(delta)) < 1e-7:
            return psi, value, st, it, st.converged
    return psi, value, st, max_iter, False


def compare_with_gaussian(evaluations, gaussian_fits, participant, basis, k, progress) -> dict:
    """Ordinal fit of each seed model; flags where the 5% conclusion on s(distance) differs."""
    from tqdm import tqdm

    out = {}
    with tqdm(
        gaussian_fits, desc="ordinal", unit="model", disable=None if progress else True
    ) as bar:
        for spec, gfit in bar:
            ofit = fit_ordinal_gamm(evaluations, spec.outcome, spec.distance, participant, basis, k)
            label = f"s({spec.distance})"
            g = gfit.smooth[label]
            g_sig, o_sig = g.p < 0.05, ofit.term.p < 0.05
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
