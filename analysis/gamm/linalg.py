"""Block elimination for H = X'X + S_lambda with a block-diagonal random part.

H = [[A, B'], [B, D]] where D holds one r x r block per level of the blocked factor. With
W = D^{-1} B and P = (A - B'W)^{-1} (p_f x p_f),

    H^{-1} = [[P, -P W'], [-W P, D^{-1} + W P W']],

so every quantity REML and the tests need (solves, log|H|, traces and Frobenius norms of
blocks of H^{-1}) costs O(q r^2 p_f + p_f^3) and H^{-1} is never formed. scipy has no sparse
Cholesky, and a dense one is O(p^3) (p = 4,010 for 2,000 participants), hence this module.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg as sla

from analysis.gamm.design import Design, TermInfo


@dataclass
class CrossProducts:
    """X'X and X'y in structured form, computed once per design."""

    a: np.ndarray  # p_f x p_f
    b: np.ndarray  # q x r x p_f
    d: np.ndarray  # q x r x r
    xfy: np.ndarray  # p_f
    zy: np.ndarray  # q x r
    yy: float


def cross_products(design: Design, y: np.ndarray | None = None) -> CrossProducts:
    y = design.y if y is None else y
    xf, rc = design.xf, design.random_cov
    q, r = design.n_groups, rc.shape[1]
    a = xf.T @ xf
    b = np.zeros((q, r, xf.shape[1]))
    d = np.zeros((q, r, r))
    zy = np.zeros((q, r))
    if r:
        g = design.group_codes
        for t in range(r):
            np.add.at(b[:, t, :], g, rc[:, t : t + 1] * xf)
            np.add.at(zy[:, t], g, rc[:, t] * y)
            for u in range(r):
                np.add.at(d[:, t, u], g, rc[:, t] * rc[:, u])
    return CrossProducts(a, b, d, xf.T @ y, zy, float(y @ y))


def fixed_penalty(design: Design, lam: np.ndarray) -> np.ndarray:
    """S_lambda restricted to the fixed block."""
    s = np.zeros((design.p_fixed, design.p_fixed))
    for t in design.terms:
        if t.fixed_slice is not None and t.penalty is not None:
            s[t.fixed_slice, t.fixed_slice] += lam[t.lambda_index] * t.penalty
    return s


def random_lambdas(design: Design, lam: np.ndarray) -> np.ndarray:
    out = np.zeros(design.n_random_terms)
    for t in design.terms:
        if t.random_index is not None:
            out[t.random_index] = lam[t.lambda_index]
    return out


@dataclass
class Factorization:
    """H^{-1} in block form for one lambda."""

    dinv: np.ndarray  # q x r x r
    w: np.ndarray  # q x r x p_f  (D^{-1} B)
    p: np.ndarray  # p_f x p_f    (Schur complement inverse)
    logdet: float

    def solve(self, rf: np.ndarray, rr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """H^{-1} [rf; rr] with rr shaped q x r (vector case) or q x r x m (m right sides)."""
        if rf.ndim == 1:
            dr = np.einsum("gtu,gu->gt", self.dinv, rr)
            xf = self.p @ (rf - np.einsum("gtf,gt->f", self.w, rr))
            return xf, dr - np.einsum("gtf,f->gt", self.w, xf)
        dr = np.einsum("gtu,gum->gtm", self.dinv, rr)
        xf = self.p @ (rf - np.einsum("gtf,gtm->fm", self.w, rr))
        return xf, dr - np.einsum("gtf,fm->gtm", self.w, xf)


def factorize(cp: CrossProducts, s_fixed: np.ndarray, lam_random: np.ndarray) -> Factorization:
    q, r = cp.zy.shape
    if r:
        d = cp.d + lam_random[None, :] * np.eye(r)[None, :, :]
        if r == 1:
            dinv = 1.0 / d
            logdet_d = float(np.sum(np.log(d[:, 0, 0])))
        else:
            dinv = np.linalg.inv(d)
            sign, ld = np.linalg.slogdet(d)
            if np.any(sign <= 0):
                raise np.linalg.LinAlgError("random-effect block is not positive definite")
            logdet_d = float(np.sum(ld))
        w = np.einsum("gtu,guf->gtf", dinv, cp.b)
        schur = cp.a + s_fixed - np.einsum("gtf,gth->fh", cp.b, w)
    else:
        dinv = np.zeros((0, 0, 0))
        w = np.zeros((0, 0, cp.a.shape[0]))
        logdet_d = 0.0
        schur = cp.a + s_fixed
    schur = (schur + schur.T) / 2.0
    c, low = sla.cho_factor(schur)
    p = sla.cho_solve((c, low), np.eye(schur.shape[0]))
    logdet = logdet_d + 2.0 * float(np.sum(np.log(np.diag(c))))
    return Factorization(dinv, w, (p + p.T) / 2.0, logdet)


# ---- blocks of H^{-1} for penalized terms -----------------------------------------------------


def term_root(term: TermInfo, lam: float) -> np.ndarray | None:
    """L with L L' = lambda S for a fixed-block term (None for blocked random terms)."""
    if term.penalty is None:
        return None
    vals, vecs = np.linalg.eigh(term.penalty)
    keep = vals > vals.max() * 1e-12
    return vecs[:, keep] * np.sqrt(lam * vals[keep])


class InverseBlocks:
    """Products of the form L_i' H^{-1} L_j for penalized terms i, j (L_j L_j' = lambda_j S_j)."""

    def __init__(self, design: Design, fac: Factorization, lam: np.ndarray):
        self.design, self.fac, self.lam = design, fac, lam
        self.pen_terms = [t for t in design.terms if t.lambda_index is not None]
        self.roots: dict[int, np.ndarray] = {}
        for t in self.pen_terms:
            if t.fixed_slice is not None:
                root = term_root(t, lam[t.lambda_index])
                full = np.zeros((design.p_fixed, root.shape[1]))
                full[t.fixed_slice] = root
                self.roots[t.lambda_index] = full

    def _fixed_random(self, i: TermInfo, u: TermInfo) -> np.ndarray:
        """L_i' H^{-1}_{f, r_u} sqrt(lam_u): r_i x q."""
        li = self.roots[i.lambda_index]
        wu = self.fac.w[:, u.random_index, :]  # q x p_f
        return -(li.T @ self.fac.p @ wu.T) * np.sqrt(self.lam[u.lambda_index])

    def trace(self, i: TermInfo) -> float:
        """lambda_i tr(H^{-1} S_i)."""
        if i.fixed_slice is not None:
            li = self.roots[i.lambda_index]
            return float(np.sum(li * (self.fac.p @ li)))
        t = i.random_index
        wt = self.fac.w[:, t, :]
        diag = self.fac.dinv[:, t, t] + np.einsum("gf,fh,gh->g", wt, self.fac.p, wt)
        return float(self.lam[i.lambda_index] * diag.sum())

    def frob2(self, i: TermInfo, j: TermInfo) -> float:
        """||L_i' H^{-1} L_j||_F^2 = lambda_i lambda_j tr(H^{-1} S_i H^{-1} S_j)."""
        fi, fj = i.fixed_slice is not None, j.fixed_slice is not None
        if fi and fj:
            m = self.roots[i.lambda_index].T @ self.fac.p @ self.roots[j.lambda_index]
            return float(np.sum(m * m))
        if fi or fj:
            a, b = (i, j) if fi else (j, i)
            m = self._fixed_random(a, b)
            return float(np.sum(m * m))
        t, u = i.random_index, j.random_index
        wt, wu, p = self.fac.w[:, t, :], self.fac.w[:, u, :], self.fac.p
        dv = self.fac.dinv[:, t, u]
        cross = np.einsum("gf,fh,gh->g", wt, p, wu)
        low = np.trace(p @ (wu.T @ wu) @ p @ (wt.T @ wt))
        total = float(dv @ dv + 2.0 * dv @ cross + low)
        return total * self.lam[i.lambda_index] * self.lam[j.lambda_index]


def penalty_times_beta(
    design: Design, lam: np.ndarray, beta_f: np.ndarray, beta_r: np.ndarray, j: int
) -> tuple[np.ndarray, np.ndarray]:
    """lambda_j S_j b in structured form; `b` may carry a trailing axis (several vectors at
    once, as the ML correction needs)."""
    sf = np.zeros_like(beta_f)
    sr = np.zeros_like(beta_r)
    for t in design.terms:
        if t.lambda_index != j:
            continue
        if t.fixed_slice is not None:
            sf[t.fixed_slice] = lam[j] * (t.penalty @ beta_f[t.fixed_slice])
        else:
            sr[:, t.random_index] = lam[j] * beta_r[:, t.random_index]
    return sf, sr


def cross_product_root(xtx: np.ndarray) -> np.ndarray:
    """Upper-triangular R with R'R = X'X. mgcv takes R from a QR of X, which never fails; from
    the cross-product, a rank-deficient X (a by-level's smooth with few distinct values) can
    round to a matrix that is not numerically positive definite, so the smallest diagonal
    jitter that makes Cholesky succeed is added (relative to the mean diagonal; the root then
    equals the exact one to that relative precision)."""
    try:
        return np.linalg.cholesky(xtx).T
    except np.linalg.LinAlgError:
        pass
    scale = float(np.mean(np.abs(np.diag(xtx)))) or 1.0
    eye = np.eye(xtx.shape[0])
    for rel in (1e-14, 1e-12, 1e-10, 1e-8):
        try:
            return np.linalg.cholesky(xtx + rel * scale * eye).T
        except np.linalg.LinAlgError:
            continue
    raise np.linalg.LinAlgError("a smooth term's model matrix is numerically singular")
