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
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.special import expit, log_expit
from threadpoolctl import threadpool_limits

from analysis.gamm import inference as inf
from analysis.gamm.design import Design, RandomEffect, Smooth, build_design
from analysis.gamm.fit import BLAS_THREADS, _logdet_s_constant
from analysis.gamm.linalg import (
    CrossProducts,
    Factorization,
    InverseBlocks,
    factorize,
    fixed_penalty,
    random_lambdas,
)
from analysis.gamm.reml import RHO_MAX, RHO_MIN, initial_rho, penalty_times_beta
from analysis.gamm.validate import (
    GammInputError,
    check_basis,
    group_column,
    rating_column,
    require_columns,
    smooth_covariate,
)

FIRST_CUT = -1.0  # mgcv's ocat fixes alpha_1 here
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
    def edf(self) -> float:
        return self.smooth[self.smooth_label].edf

    @property
    def ref_df(self) -> float:
        return self.smooth[self.smooth_label].ref_df

    @property
    def chi_sq(self) -> float:
        return self.smooth[self.smooth_label].chi_sq

    @property
    def p(self) -> float:
        return self.smooth[self.smooth_label].p

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


# ---- the ordinal log-likelihood and its derivatives ------------------------------------------


@dataclass
class _Derivs:
    """Per observation: l (``ll``), dl/deta, W = -d2l/deta2, dW/deta, and the derivatives of l, dl/deta
    and W with respect to the upper (_u) and lower (_l) cut point of the observed category."""

    ll: np.ndarray
    g: np.ndarray
    w: np.ndarray
    w1: np.ndarray
    l_u: np.ndarray
    l_l: np.ndarray
    g_u: np.ndarray
    g_l: np.ndarray
    w_u: np.ndarray
    w_l: np.ndarray


def _derivatives(codes: np.ndarray, alpha: np.ndarray, eta: np.ndarray) -> _Derivs:
    """l = log(F(a) - F(b)), a = alpha_upper - eta, b = alpha_lower - eta, F logistic
    (alpha_0 = -inf, alpha_R = inf); derivatives through those of L(a, b) up to third order."""
    cuts = np.concatenate([[-np.inf], alpha, [np.inf]])
    a = cuts[codes + 1] - eta
    b = cuts[codes] - eta
    with np.errstate(invalid="ignore", divide="ignore"):
        # log(F(a) - F(b)) on the side of the logistic where it does not cancel, so that the
        # ratios below stay finite far in the tails (a poor warm start can put eta there)
        la, lb, lca, lcb = log_expit(a), log_expit(b), log_expit(-a), log_expit(-b)
        upper = b > 0
        logp = np.where(
            upper,
            lcb + np.log1p(-np.exp(np.minimum(lca - lcb, 0.0))),
            la + np.log1p(-np.exp(np.minimum(lb - la, 0.0))),
        )
        # f(a) / p and f(b) / p, f the logistic density (0 at the infinite cut points)
        ra = np.exp(la + lca - logp)
        rb = np.exp(lb + lcb - logp)
    ra = np.nan_to_num(ra, nan=0.0)
    rb = np.nan_to_num(rb, nan=0.0)
    fa, fb = expit(a), expit(b)
    ca, cb = expit(-a), expit(-b)
    da, db = fa * ca, fb * cb
    # derivatives of p = F(a) - F(b) divided by p: f'(x) = f (1 - 2F), f''(x) = f (1 - 6f)
    a1, b1 = ra, -rb
    a2, b2 = ra * (ca - fa), -rb * (cb - fb)
    a3, b3 = ra * (1.0 - 6.0 * da), -rb * (1.0 - 6.0 * db)
    l_aa, l_bb, l_ab = a2 - a1**2, b2 - b1**2, -a1 * b1
    l_aaa = a3 - 3.0 * a2 * a1 + 2.0 * a1**3
    l_bbb = b3 - 3.0 * b2 * b1 + 2.0 * b1**3
    l_aab = -a2 * b1 + 2.0 * a1**2 * b1
    l_abb = -a1 * b2 + 2.0 * a1 * b1**2
    return _Derivs(
        ll=logp,
        g=-(a1 + b1),
        w=np.maximum(-(l_aa + 2.0 * l_ab + l_bb), 1e-12),
        w1=l_aaa + 3.0 * l_aab + 3.0 * l_abb + l_bbb,
        l_u=a1,
        l_l=b1,
        g_u=-(l_aa + l_ab),
        g_l=-(l_ab + l_bb),
        w_u=-(l_aaa + 2.0 * l_aab + l_abb),
        w_l=-(l_aab + 2.0 * l_abb + l_bbb),
    )


def _cut_points(theta: np.ndarray) -> np.ndarray:
    return FIRST_CUT + np.concatenate([[0.0], np.cumsum(np.exp(theta))])


# ---- Laplace-approximate REML ----------------------------------------------------------------


@dataclass
class _Inner:
    """The penalized Newton fit at one (theta, rho)."""

    beta_f: np.ndarray
    beta_r: np.ndarray
    eta: np.ndarray
    der: _Derivs
    cp: CrossProducts
    fac: Factorization
    loglik: float
    penalty: float
    converged: bool


class _OrdinalLaml:
    """V(rho, theta) and its gradient for one design; keeps the last coefficients as a warm
    start for the next inner fit."""

    def __init__(self, design: Design, codes: np.ndarray, n_cat: int, beta_f0: np.ndarray):
        self.design = design
        self.codes = codes
        self.n_cat = n_cat
        n, q = design.n, design.n_groups
        self.gt = sparse.csr_matrix((np.ones(n), (design.group_codes, np.arange(n))), shape=(q, n))
        self.pen_terms = {t.lambda_index: t for t in design.terms if t.lambda_index is not None}
        self.m = design.n_lambda
        self.ranks = np.array([self.pen_terms[j].rank for j in range(self.m)], dtype=float)
        self.beta_f = beta_f0.copy()
        self.beta_r = np.zeros((q, design.n_random_terms))
        # which cut point is the upper / lower one of each observation's category
        self.has_u = codes < n_cat - 1
        self.has_l = codes > 0
        self.upper = np.minimum(codes, n_cat - 2)
        self.lower = np.maximum(codes - 1, 0)
        self.inner_iterations = 0

    # structured products with X
    def linear(self, bf: np.ndarray, br: np.ndarray) -> np.ndarray:
        d = self.design
        return d.xf @ bf + np.sum(br[d.group_codes] * d.random_cov, axis=1)

    def xt(self, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        d = self.design
        return d.xf.T @ v, self.gt @ (d.random_cov * v[:, None])

    def cross_products(self, w: np.ndarray, z: np.ndarray) -> CrossProducts:
        """X'WX and X'Wz in linalg's structured form."""
        d = self.design
        xf, rc, r = d.xf, d.random_cov, d.n_random_terms
        xw = xf * w[:, None]
        b = np.stack([self.gt @ (rc[:, t : t + 1] * xw) for t in range(r)], axis=1)
        dd = np.stack(
            [
                np.stack([self.gt @ (w * rc[:, t] * rc[:, u]) for u in range(r)], -1)
                for t in range(r)
            ],
            axis=1,
        )
        wz = w * z
        return CrossProducts(xw.T @ xf, b, dd, xf.T @ wz, self.gt @ (rc * wz[:, None]), 0.0)

    def penalty(self, lam: np.ndarray, bf: np.ndarray, br: np.ndarray) -> float:
        total = 0.0
        for t in self.design.terms:
            if t.lambda_index is None:
                continue
            if t.fixed_slice is not None:
                c = bf[t.fixed_slice]
                total += lam[t.lambda_index] * float(c @ t.penalty @ c)
            else:
                total += lam[t.lambda_index] * float(np.sum(br[:, t.random_index] ** 2))
        return total

    def warm_start(self, st: _Inner) -> None:
        self.beta_f, self.beta_r = st.beta_f, st.beta_r

    def theta_jacobians(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """d alpha_upper / d theta and d alpha_lower / d theta per observation (n x R-2)."""
        k = theta.size
        jac = np.tril(np.ones((k + 1, k)), -1) * np.exp(theta)[None, :]
        return jac[self.upper] * self.has_u[:, None], jac[self.lower] * self.has_l[:, None]

    def inner(self, theta: np.ndarray, rho: np.ndarray, tol: float = 1e-9) -> _Inner:
        """Penalized Newton (= IRLS with the observed-information weights) with step halving."""
        alpha = _cut_points(theta)
        lam = np.exp(rho)
        s_fixed = fixed_penalty(self.design, lam)
        lam_r = random_lambdas(self.design, lam)
        bf, br = self.beta_f, self.beta_r
        eta = self.linear(bf, br)
        der = _derivatives(self.codes, alpha, eta)
        pen = self.penalty(lam, bf, br)
        obj = float(der.ll.sum()) - pen / 2.0
        converged = False
        for _ in range(200):
            self.inner_iterations += 1
            cp = self.cross_products(der.w, eta + der.g / der.w)
            fac = factorize(cp, s_fixed, lam_r)
            nf, nr = fac.solve(cp.xfy, cp.zy)
            sf, sr = nf - bf, nr - br
            for _ in range(60):
                cf, cr = bf + sf, br + sr
                c_eta = self.linear(cf, cr)
                c_der = _derivatives(self.codes, alpha, c_eta)
                c_pen = self.penalty(lam, cf, cr)
                c_obj = float(c_der.ll.sum()) - c_pen / 2.0
                if c_obj >= obj - 1e-11 * abs(obj):
                    break
                sf, sr = sf / 2.0, sr / 2.0
            change = float(np.max(np.abs(c_eta - eta)))
            bf, br, eta, der, pen, obj = cf, cr, c_eta, c_der, c_pen, c_obj
            if change < tol:
                converged = True
                break
        cp = self.cross_products(der.w, eta + der.g / der.w)
        fac = factorize(cp, s_fixed, lam_r)
        self.beta_f, self.beta_r = bf, br
        return _Inner(bf, br, eta, der, cp, fac, float(der.ll.sum()), pen, converged)

    def leverages(self, fac: Factorization) -> np.ndarray:
        """h_i = x_i'(X'WX + S)^{-1} x_i from the block factorization."""
        d = self.design
        g, rc = d.group_codes, d.random_cov
        u = d.xf - np.einsum("itf,it->if", fac.w[g], rc)
        return np.einsum("if,fh,ih->i", u, fac.p, u) + np.einsum(
            "it,itu,iu->i", rc, fac.dinv[g], rc
        )

    def value_and_grad(self, psi: np.ndarray) -> tuple[float, np.ndarray, _Inner]:
        m = self.m
        rho, theta = psi[:m], psi[m:]
        lam = np.exp(rho)
        st = self.inner(theta, rho)
        value = -st.loglik + st.penalty / 2.0 + st.fac.logdet / 2.0 - float(self.ranks @ rho) / 2.0
        der, fac = st.der, st.fac
        h = self.leverages(fac)
        blocks = InverseBlocks(self.design, fac, lam)
        grad = np.zeros(psi.size)
        for j in range(m):
            sf, sr = penalty_times_beta(self.design, lam, st.beta_f, st.beta_r, j)
            d_j = float(sf @ st.beta_f + np.sum(sr * st.beta_r))
            xf, xr = fac.solve(sf, sr)
            deta = -self.linear(xf, xr)  # d eta / d rho_j
            trace = blocks.trace(self.pen_terms[j]) + float(h @ (der.w1 * deta))
            grad[j] = (d_j - self.ranks[j] + trace) / 2.0
        ju, jl = self.theta_jacobians(theta)
        for k in range(theta.size):
            dg = der.g_u * ju[:, k] + der.g_l * jl[:, k]
            xf, xr = fac.solve(*self.xt(dg))
            deta = self.linear(xf, xr)  # d eta / d theta_k
            dl = der.l_u * ju[:, k] + der.l_l * jl[:, k]
            dw = der.w_u * ju[:, k] + der.w_l * jl[:, k] + der.w1 * deta
            grad[m + k] = -float(dl.sum()) + float(h @ dw) / 2.0
        return value, grad, st


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
        laml = _OrdinalLaml(design, codes, n_cat, beta_f0)
        # smoothing parameters start where each penalty matches its block of X'WX at the start
        der0 = _derivatives(codes, _cut_points(theta0), np.full(codes.size, intercept0))
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
                sl = t.fixed_slice
                tr = inf.smooth_test(
                    st.beta_f[sl],
                    st.cp.a[sl, sl],
                    st.fac.p[sl, sl],
                    min(t.n_coef, edfs[t.label][1]),
                    -1.0,
                )
            elif t.kind == "random":
                tr = inf.random_effect_test_blocked(
                    design, t, st.cp, st.fac, lam, st.beta_r, 1.0, -1.0, known_scale=True
                )
            else:
                continue
            smooth[t.label] = OrdinalTerm(edfs[t.label][0], tr.ref_df, tr.stat * tr.ref_df, tr.p)
    label = next(t.label for t in design.terms if t.kind == "smooth")
    reml = value + _logdet_s_constant(design) - design.null_space_dim / 2.0 * np.log(2 * np.pi)
    return OrdinalFit(
        n=int(codes.size),
        categories=categories,
        thresholds=[float(a) for a in _cut_points(theta)],
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
    laml: _OrdinalLaml, psi: np.ndarray, lo: np.ndarray, hi: np.ndarray, max_iter: int
) -> tuple[np.ndarray, float, _Inner, int, bool]:
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
    with tqdm(gaussian_fits, desc="ordinal", unit="model", disable=not progress) as bar:
        for spec, gfit in bar:
            ofit = fit_ordinal_gamm(evaluations, spec.outcome, spec.distance, participant, basis, k)
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
