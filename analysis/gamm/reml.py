"""REML estimation of the smoothing parameters of a Gaussian additive mixed model (Wood 2011).

The criterion (negative log restricted likelihood, as mgcv minimises it) is

    V(rho, tau) = D / (2 phi) + (n - M_p)/2 log(2 pi phi) - log|S_lambda|_+ / 2 + log|H| / 2,

with lambda = exp(rho), phi = exp(tau), H = X'X + S_lambda, D = ||y - X b||^2 + b'S_lambda b at
the penalized least-squares b, and M_p the number of unpenalized coefficients. Every penalty acts
on its own block, so log|S_lambda|_+ = sum_j rank_j rho_j + const. We profile phi out
(phi = D / (n - M_p)) and run Newton's method with the exact Hessian on rho.

statsmodels' MixedLM cannot carry penalized spline terms next to two variance components with
mgcv's parameterisation, and pygam has no random effects, hence this module.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.gamm.design import Design
from analysis.gamm.linalg import (
    CrossProducts,
    Factorization,
    InverseBlocks,
    cross_products,
    factorize,
    fixed_penalty,
    penalty_times_beta,
    random_lambdas,
)

RHO_MIN, RHO_MAX = -20.0, 30.0


@dataclass
class RemlState:
    """Everything known at one rho."""

    rho: np.ndarray
    fac: Factorization
    beta_f: np.ndarray
    beta_r: np.ndarray  # q x r
    dev_pen: float  # D
    scale: float  # profiled phi
    value: float  # profiled criterion
    grad: np.ndarray
    hess: np.ndarray
    blocks: InverseBlocks
    d_j: np.ndarray  # b' lambda_j S_j b
    traces: np.ndarray  # lambda_j tr(H^{-1} S_j)
    frob: np.ndarray  # lambda_i lambda_j tr(H^{-1} S_i H^{-1} S_j)
    bsb: np.ndarray  # lambda_i lambda_j b' S_i H^{-1} S_j b
    dbeta: list[tuple[np.ndarray, np.ndarray]]  # d b / d rho_j (fixed part, random part)
    ml_hess: np.ndarray | None = None  # Hessian of the ML correction (``ml``), else None


def evaluate(
    design: Design,
    cp: CrossProducts,
    rho: np.ndarray,
    known_scale: float | None = None,
    ml_basis: np.ndarray | None = None,
) -> RemlState:
    """Fit at fixed rho; criterion (phi profiled out, or fixed at ``known_scale``) with its
    gradient and Hessian; ML instead of REML when ``ml_basis`` (the unpenalized directions,
    ``ml.unpenalized_basis``) is given."""
    lam = np.exp(rho)
    fac = factorize(cp, fixed_penalty(design, lam), random_lambdas(design, lam))
    beta_f, beta_r = fac.solve(cp.xfy, cp.zy)
    dev_pen = cp.yy - float(beta_f @ cp.xfy) - float(np.sum(beta_r * cp.zy))
    n_eff = design.n - (0 if ml_basis is not None else design.null_space_dim)
    dev_pen = max(dev_pen, 1e-300)
    scale = dev_pen / n_eff
    blocks = InverseBlocks(design, fac, lam)
    m = design.n_lambda
    pen_terms = {t.lambda_index: t for t in design.terms if t.lambda_index is not None}
    ranks = np.array([pen_terms[j].rank for j in range(m)], dtype=float)
    sb = [penalty_times_beta(design, lam, beta_f, beta_r, j) for j in range(m)]
    d_j = np.array([float(sf @ beta_f + np.sum(sr * beta_r)) for sf, sr in sb])
    dbeta = []
    for sf, sr in sb:
        xf, xr = fac.solve(sf, sr)
        dbeta.append((-xf, -xr))
    bsb = np.array(
        [
            [-float(sb[i][0] @ dbeta[j][0] + np.sum(sb[i][1] * dbeta[j][1])) for j in range(m)]
            for i in range(m)
        ]
    )
    traces = np.array([blocks.trace(pen_terms[j]) for j in range(m)])
    frob = np.array(
        [[blocks.frob2(pen_terms[i], pen_terms[j]) for j in range(m)] for i in range(m)]
    )
    logdet_s = float(ranks @ rho)  # + a constant that does not depend on rho
    ddev = np.diag(d_j) - 2.0 * bsb
    if known_scale is None:
        value = n_eff / 2.0 * (1.0 + np.log(2.0 * np.pi * scale)) - logdet_s / 2.0
        grad = n_eff / 2.0 * d_j / dev_pen - ranks / 2.0 + traces / 2.0
        hess = n_eff / 2.0 * (ddev / dev_pen - np.outer(d_j, d_j) / dev_pen**2)
    else:
        scale = known_scale
        value = dev_pen / (2.0 * scale) - logdet_s / 2.0
        grad = d_j / (2.0 * scale) - ranks / 2.0 + traces / 2.0
        hess = ddev / (2.0 * scale)
    value += fac.logdet / 2.0
    hess = hess + (np.diag(traces) - frob) / 2.0
    ml_hess = None
    if ml_basis is not None:
        from analysis.gamm.ml import ml_correction

        extra, extra_grad, ml_hess = ml_correction(design, fac, lam, ml_basis)
        value += extra
        grad = grad + extra_grad
        hess = hess + ml_hess
    return RemlState(
        rho,
        fac,
        beta_f,
        beta_r,
        dev_pen,
        scale,
        value,
        grad,
        (hess + hess.T) / 2,
        blocks,
        d_j,
        traces,
        frob,
        bsb,
        dbeta,
        ml_hess,
    )


def full_hessian(state: RemlState, design: Design) -> np.ndarray:
    """Hessian of V in (rho, log phi) at the optimum, as mgcv's Newton reports it."""
    phi = state.scale
    m = state.rho.size
    h = np.zeros((m + 1, m + 1))
    h[:m, :m] = (np.diag(state.d_j) - 2.0 * state.bsb) / (2.0 * phi) + (
        np.diag(state.traces) - state.frob
    ) / 2.0
    if state.ml_hess is not None:
        h[:m, :m] += state.ml_hess
    h[:m, m] = h[m, :m] = -state.d_j / (2.0 * phi)
    h[m, m] = state.dev_pen / (2.0 * phi)
    return (h + h.T) / 2.0


def initial_rho(design: Design, cp: CrossProducts) -> np.ndarray:
    """Start where each penalty is comparable in size to its block of X'X."""
    rho = np.zeros(design.n_lambda)
    for t in design.terms:
        if t.lambda_index is None:
            continue
        if t.fixed_slice is not None:
            xx = np.mean(np.diag(cp.a)[t.fixed_slice])
            ev = np.linalg.eigvalsh(t.penalty)
            ss = np.mean(ev[ev > ev.max() * 1e-10])
        else:
            xx = np.mean(cp.d[:, t.random_index, t.random_index])
            ss = 1.0
        rho[t.lambda_index] = np.log(max(xx, 1e-12) / ss)
    return rho


def fit_reml(
    design: Design,
    cp: CrossProducts | None = None,
    max_iter: int = 200,
    tol: float = 1e-9,
    known_scale: float | None = None,
    start: np.ndarray | None = None,
    hold: np.ndarray | None = None,
    ml: bool = False,
) -> tuple[RemlState, int, bool]:
    """Minimise the REML criterion by damped Newton over the log smoothing parameters not
    flagged in ``hold`` (those stay at ``start``); returns (state, iterations, ok)."""
    cp = cross_products(design) if cp is None else cp
    ub = None
    if ml:
        from analysis.gamm.ml import unpenalized_basis

        ub = unpenalized_basis(design)
    if design.n_lambda == 0:
        return evaluate(design, cp, np.zeros(0), known_scale, ub), 0, True
    rho0 = initial_rho(design, cp) if start is None else np.clip(start, RHO_MIN, RHO_MAX)
    state = evaluate(design, cp, rho0, known_scale, ub)
    for it in range(1, max_iter + 1):
        g = state.grad.copy()
        # a parameter pushed to a bound with the gradient pointing outwards stays there
        at_hi = (state.rho >= RHO_MAX - 1e-8) & (g < 0)
        at_lo = (state.rho <= RHO_MIN + 1e-8) & (g > 0)
        free = ~(at_hi | at_lo)
        if hold is not None:
            free &= ~hold
        if np.all(np.abs(g[free]) < tol * (1.0 + abs(state.value))) or not np.any(free):
            return state, it, True
        h = state.hess[np.ix_(free, free)]
        vals, vecs = np.linalg.eigh(h)
        floor = max(np.max(np.abs(vals)) * 1e-7, 1e-10)
        vals = np.maximum(np.abs(vals), floor)
        step_free = -vecs @ ((vecs.T @ g[free]) / vals)
        limit = 5.0
        big = np.max(np.abs(step_free))
        if big > limit:
            step_free *= limit / big
        step = np.zeros_like(state.rho)
        step[free] = step_free
        accepted = False
        for _ in range(40):
            trial_rho = np.clip(state.rho + step, RHO_MIN, RHO_MAX)
            try:
                trial = evaluate(design, cp, trial_rho, known_scale, ub)
            except np.linalg.LinAlgError:  # numerically singular H: step too far
                step /= 2.0
                continue
            if trial.value <= state.value + 1e-12 * abs(state.value):
                accepted = True
                break
            step /= 2.0
        if not accepted:
            return state, it, bool(np.all(np.abs(g[free]) < 1e-5 * (1.0 + abs(state.value))))
        converged_by_value = abs(trial.value - state.value) < 1e-13 * (1.0 + abs(state.value))
        state = trial
        if converged_by_value and np.max(np.abs(step)) < 1e-6:
            return state, it, True
    return state, max_iter, False
