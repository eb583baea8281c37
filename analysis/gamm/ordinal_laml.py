"""The Laplace-approximate restricted likelihood of the cumulative-logit GAMM and its exact
gradient (see ``ordinal``'s docstring for the model and the estimation).

Kept apart from the fit itself because this is the part that must be right to the last
derivative: the ordinal log-likelihood to third order, the penalized Newton inner fit and
the implicit-differentiation gradient in (log lambda, theta). ``ordinal`` only drives it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.special import expit, log_expit

from analysis.gamm.design import Design
from analysis.gamm.linalg import (
    CrossProducts,
    Factorization,
    InverseBlocks,
    factorize,
    fixed_penalty,
    penalty_times_beta,
    random_lambdas,
)

FIRST_CUT = -1.0  # mgcv's ocat fixes alpha_1 here


# ---- the ordinal log-likelihood and its derivatives ------------------------------------------


@dataclass
class Derivs:
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


def derivatives(codes: np.ndarray, alpha: np.ndarray, eta: np.ndarray) -> Derivs:
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
    return Derivs(
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


def cut_points(theta: np.ndarray) -> np.ndarray:
    return FIRST_CUT + np.concatenate([[0.0], np.cumsum(np.exp(theta))])


# ---- Laplace-approximate REML ----------------------------------------------------------------


@dataclass
class InnerFit:
    """The penalized Newton fit at one (theta, rho)."""

    beta_f: np.ndarray
    beta_r: np.ndarray
    eta: np.ndarray
    der: Derivs
    cp: CrossProducts
    fac: Factorization
    loglik: float
    penalty: float
    converged: bool


class OrdinalLaml:
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

    def warm_start(self, st: InnerFit) -> None:
        self.beta_f, self.beta_r = st.beta_f, st.beta_r

    def theta_jacobians(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """d alpha_upper / d theta and d alpha_lower / d theta per observation (n x R-2)."""
        k = theta.size
        jac = np.tril(np.ones((k + 1, k)), -1) * np.exp(theta)[None, :]
        return jac[self.upper] * self.has_u[:, None], jac[self.lower] * self.has_l[:, None]

    def inner(self, theta: np.ndarray, rho: np.ndarray, tol: float = 1e-9) -> InnerFit:
        """Penalized Newton (= IRLS with the observed-information weights) with step halving."""
        alpha = cut_points(theta)
        lam = np.exp(rho)
        s_fixed = fixed_penalty(self.design, lam)
        lam_r = random_lambdas(self.design, lam)
        bf, br = self.beta_f, self.beta_r
        eta = self.linear(bf, br)
        der = derivatives(self.codes, alpha, eta)
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
                c_der = derivatives(self.codes, alpha, c_eta)
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
        return InnerFit(bf, br, eta, der, cp, fac, float(der.ll.sum()), pen, converged)

    def leverages(self, fac: Factorization) -> np.ndarray:
        """h_i = x_i'(X'WX + S)^{-1} x_i from the block factorization."""
        d = self.design
        g, rc = d.group_codes, d.random_cov
        u = d.xf - np.einsum("itf,it->if", fac.w[g], rc)
        return np.einsum("if,fh,ih->i", u, fac.p, u) + np.einsum(
            "it,itu,iu->i", rc, fac.dinv[g], rc
        )

    def value_and_grad(self, psi: np.ndarray) -> tuple[float, np.ndarray, InnerFit]:
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
