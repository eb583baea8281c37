"""Wood's (2013b) random-effect test for the terms of the blocked grouping factor, with every
q x q matrix (q = number of levels, e.g. participants) kept in diagonal-plus-low-rank form.

mgcv's ``reTest`` with the other random effects integrated out needs, for the tested term m,

    K~ = diag(k) - U U'                      (the Schur complement R_m'R_m, U: q x p_f),
    V  = diag(v) + L C L'                    (Ve_mm / phi, L = [W_m, a W_m]: q x 2 p_f),

the statistic b_m' K~ b_m / phi, the rank of V (Ref.df) and the q eigenvalues of K~ V (the
weights of the reference mixture). With few levels (``DENSE_MAX_LEVELS``) those eigenvalues are
computed as mgcv computes them; above, nothing of size q x q is formed:

* Ref.df: mgcv's count of eigenvalues above max x eps^0.8, as q minus the eigenvalues below that
  threshold tau, counted by Sylvester's law of inertia: # eig(K~ V) < tau = # negative
  eigenvalues of V - tau K~^{-1} = diagonal + rank-3 p_f, whose inertia is that of its diagonal
  plus that of a 3 p_f x 3 p_f matrix (Haynsworth); the largest eigenvalue by bisection on
  that same count.
* p-value: when mgcv's (Gaussian) p would be negligible, a Chernoff bound (as before); otherwise
  Imhof's integral with log det(I - i u K~ V) = log det(I - i u D) + log det of a small matrix
  (``analysis.gamm.spectral``), K~ V = D + A B' with D = diag(k v).

Time and memory are O(q p_f^2) per test.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg as sla
from scipy.optimize import minimize_scalar

from analysis.gamm.chisq import f_ratio_mixture_sf, imhof_sf, mixture_sf, weight_spectrum
from analysis.gamm.design import Design, TermInfo
from analysis.gamm.inference import TestResult
from analysis.gamm.linalg import CrossProducts, Factorization, fixed_penalty
from analysis.gamm.spectral import LowRankSpectrum

#: up to this many levels the q eigenvalues are computed densely, exactly as mgcv does
DENSE_MAX_LEVELS = 1000
#: above DENSE_MAX_LEVELS a Chernoff bound on p below this is reported instead of Imhof's p
RE_BOUND_CUTOFF = 1e-10
#: mgcv's rank rule: eigenvalues above max x RANK_TOL count
RANK_TOL = float(np.finfo(float).eps ** 0.8)


@dataclass
class ReProblem:
    """The structured pieces of one random-effect test (see the module docstring)."""

    k: np.ndarray  # q: diagonal of K~
    u: np.ndarray  # q x p_f
    v: np.ndarray  # q: diagonal of V
    lv: np.ndarray  # q x 2 p_f: V = diag(v) + lv c lv'
    c: np.ndarray  # 2 p_f x 2 p_f, symmetric
    stat: float  # b_m' K~ b_m / phi

    @property
    def q(self) -> int:
        return self.k.size

    def k_inverse_parts(self) -> tuple[np.ndarray, np.ndarray]:
        """K~^{-1} = diag(1/k) + Ud Cw Ud' (Woodbury): (Ud, Cw)."""
        ud = self.u / self.k[:, None]
        core = np.eye(self.u.shape[1]) - self.u.T @ ud
        return ud, np.linalg.inv((core + core.T) / 2.0)

    def product_form(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """K~ V = diag(delta) + A B' (delta = k v)."""
        kl = self.k[:, None] * self.lv - self.u @ (self.u.T @ self.lv)
        a = np.hstack([kl @ self.c, -self.u])
        b = np.hstack([self.lv, self.v[:, None] * self.u])
        return self.k * self.v, a, b


def re_problem(
    design: Design,
    term: TermInfo,
    cp: CrossProducts,
    fac: Factorization,
    lam: np.ndarray,
    beta_r: np.ndarray,
    scale: float,
) -> ReProblem:
    """K~, V and the statistic of mgcv's ``reTest`` for a blocked random term, from the block
    factorization of H: O(q p_f^2)."""
    m = term.random_index
    others = [t for t in design.terms if t.random_index is not None and t is not term]
    lam_m = lam[term.lambda_index]
    d = cp.d
    k_mm = d[:, m, m] + lam_m
    k_rm = cp.b[:, m, :].T.copy()
    s_fixed = fixed_penalty(design, lam)
    k_rr = cp.a + s_fixed
    for o in others:
        lo, oi = lam[o.lambda_index], o.random_index
        k_mm += d[:, m, oi] ** 2 / lo
        k_rm += cp.b[:, oi, :].T * (d[:, oi, m] / lo)[None, :]
        k_rr += cp.b[:, oi, :].T @ cp.b[:, oi, :] / lo
    # K~ = diag(k_mm) - U U', U = K_rm' L^{-T} with L L' = K_rr
    low = np.linalg.cholesky((k_rr + k_rr.T) / 2.0)
    u = sla.solve_triangular(low, k_rm, lower=True).T  # q x p_f
    b_m = beta_r[:, m]
    stat = float((k_mm @ b_m**2 - np.sum((u.T @ b_m) ** 2)) / scale)
    # Ve_mm / phi = Hinv_mm - lam_m Hinv_mm Hinv_mm - sum_j lam_j Hinv_mj S_j Hinv_jm with
    # Hinv_mm = diag(a) + W P W', Hinv_mf = -W P (W = D^{-1} B for term m, P = fac.p):
    # = diag(a - lam_m a^2) + [W, aW] [[P - P C0 P, -lam_m P], [-lam_m P, 0]] [W, aW]'
    a = fac.dinv[:, m, m]
    w_m = fac.w[:, m, :]
    p = fac.p
    c0 = lam_m * (w_m.T @ w_m) + s_fixed
    top = p - p @ c0 @ p
    core = np.block([[(top + top.T) / 2.0, -lam_m * p], [-lam_m * p, np.zeros_like(p)]])
    return ReProblem(k_mm, u, a - lam_m * a**2, np.hstack([w_m, a[:, None] * w_m]), core, stat)


# ---- the q eigenvalues, densely (few levels) -------------------------------------------------


def dense_weights(prob: ReProblem) -> np.ndarray:
    """Eigenvalues of K~ V as mgcv computes them (generalized problem V x = ev K~^{-1} x)."""
    ud, cw = prob.k_inverse_parts()
    k_inv = ud @ cw @ ud.T
    k_inv[np.diag_indices_from(k_inv)] += 1.0 / prob.k
    v = prob.lv @ prob.c @ prob.lv.T
    v = (v + v.T) / 2.0
    v[np.diag_indices_from(v)] += prob.v
    return sla.eigh(v, (k_inv + k_inv.T) / 2.0, eigvals_only=True, driver="gvx")


# ---- structured: rank, largest eigenvalue -----------------------------------------------------


def count_below(prob: ReProblem, tau: float) -> int:
    """# eigenvalues of K~ V below tau, by the inertia of V - tau K~^{-1} (see module doc)."""
    ud, cw = prob.k_inverse_parts()
    delta = prob.v - tau / prob.k
    tiny = np.abs(delta) <= 1e-15 * np.max(np.abs(delta))
    if tiny.any():  # the count is the same an ulp further: keep the diagonal invertible
        return count_below(prob, tau * (1.0 + 1e-9))
    w = np.hstack([prob.lv, ud])
    sig = sla.block_diag(prob.c, -tau * cw)
    qm, r = np.linalg.qr(w)
    core = r @ sig @ r.T
    lam, e = np.linalg.eigh((core + core.T) / 2.0)
    keep = np.abs(lam) > np.max(np.abs(lam)) * 1e-14 if lam.size else np.zeros(0, bool)
    # In(D + W S W') = In(D) + In(S^{-1} + W'D^{-1}W) - In(S^{-1}); the middle term congruent to
    # sign(S) + |S|^{1/2} W'D^{-1}W |S|^{1/2}, which needs no inverse of a tiny eigenvalue
    ws = (qm @ e[:, keep]) * np.sqrt(np.abs(lam[keep]))
    small = np.diag(np.sign(lam[keep])) + ws.T @ (ws / delta[:, None])
    es = np.linalg.eigvalsh((small + small.T) / 2.0)
    return int(np.sum(delta < 0) + np.sum(es > 0) - np.sum(lam[keep] > 0))


def max_eigenvalue(prob: ReProblem) -> float:
    """Largest eigenvalue of K~ V, by bisection on the exact count of eigenvalues below a
    threshold (``count_below``, O(q p_f^2) each). Lanczos needed up to 10^5 iterations when a
    random effect vanishes and the top of the spectrum is a tight cluster; the count does not
    care how clustered it is."""
    q = prob.q
    hi = max(float(np.max(np.abs(prob.k * prob.v))), 1e-300)
    while count_below(prob, hi) < q:  # every eigenvalue below hi
        hi *= 2.0
    lo = hi / 2.0
    while count_below(prob, lo) >= q:  # ... and not every one below lo
        if lo < hi * 1e-30:
            return max(hi, 1e-300)  # all of them ~0: mgcv's rank rule keeps none
        hi, lo = lo, lo / 2.0
    while hi - lo > 1e-12 * hi:
        mid = 0.5 * (lo + hi)
        if count_below(prob, mid) < q:
            lo = mid
        else:
            hi = mid
    return hi


# ---- the test ----------------------------------------------------------------------------------


def random_effect_test_blocked(
    design: Design,
    term: TermInfo,
    cp: CrossProducts,
    fac: Factorization,
    lam: np.ndarray,
    beta_r: np.ndarray,
    scale: float,
    res_df: float,
    known_scale: bool = False,
) -> TestResult:
    """mgcv's ``reTest`` of a term of the blocked factor (other random effects integrated out).

    With ``known_scale`` the statistic is referred to sum_i ev_i chi^2_1 itself (mgcv's reTest
    when the scale is not estimated, e.g. ocat); ``scale`` is then that known scale.
    """
    prob = re_problem(design, term, cp, fac, lam, beta_r, scale)
    stat = prob.stat
    if prob.q <= DENSE_MAX_LEVELS:
        ev = dense_weights(prob)
        ev[ev < 0] = 0.0
        rank = int(np.sum(ev > ev.max() * RANK_TOL))
        if known_scale:
            pval = mixture_sf(stat, ev[ev > 0])
        else:
            pval = f_ratio_mixture_sf(stat, ev[ev > 0], res_df)
        return TestResult(stat / rank, float(rank), pval)
    top = max_eigenvalue(prob)
    rank = prob.q - count_below(prob, top * RANK_TOL)
    delta, a, b = prob.product_form()
    spectrum = LowRankSpectrum(delta, a, b)
    if not known_scale:
        bound = chernoff_bound(spectrum, top, stat, res_df)
        if bound < RE_BOUND_CUTOFF:
            return TestResult(stat / rank, float(rank), bound)
    return TestResult(stat / rank, float(rank), structured_sf(prob, top, res_df, known_scale))


def structured_sf(prob: ReProblem, top: float, res_df: float, known_scale: bool) -> float:
    """mgcv's p-value of the test, P(sum ev chi^2_1 > stat) (known scale) or
    P(sum ev chi^2_1 > stat chi^2_k / k), ev the eigenvalues of K~ V, by Imhof's integral on
    the structure."""
    k = max(1, int(round(res_df)))
    extra = 0.0 if known_scale else prob.stat / k
    norm = max(top, extra)
    delta, a, b = prob.product_form()
    spec = LowRankSpectrum(delta / norm, a / norm, b)
    if known_scale:
        return imhof_sf(prob.stat / norm, spec.imhof_spectrum)
    other = weight_spectrum(np.array([-extra / norm]), np.array([float(k)]))

    def spectrum(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        s1, l1 = spec.imhof_spectrum(u)
        s2, l2 = other(u)
        return s1 + s2, l1 + l2

    return imhof_sf(0.0, spectrum)


def chernoff_bound(spectrum: LowRankSpectrum, top: float, stat: float, res_df: float) -> float:
    """Upper bound on P(sum ev_i chi^2_1 > stat chi^2_k / k), ev the eigenvalues of K~ V:
    min over t of E exp(t (Q - stat chi^2_k / k)), with log det(I - 2 t K~ V) from the
    structure. Used to skip Imhof's integral when the p-value is negligible anyway."""
    k = max(1, int(round(res_df)))
    c = stat / k
    hi = 0.5 / (top * 1.001)

    def log_bound(t: float) -> float:
        logdet = spectrum.log_det_real(2.0 * t)
        if not np.isfinite(logdet):
            return np.inf
        return -0.5 * logdet - 0.5 * k * np.log1p(2.0 * t * c)

    res = minimize_scalar(log_bound, bounds=(0.0, hi), method="bounded")
    return float(min(1.0, np.exp(min(res.fun, 0.0))))
