"""What turns the REML criterion into mgcv's ML criterion (``method = "ML"``).

ML treats the unpenalized coefficients (intercept, parametric terms, the null spaces of the
smooths) as fixed effects at their estimates instead of integrating them out, so

    V_ML = D / (2 phi) + n/2 log(2 pi phi) - log|S_lambda|_+ / 2 + log|H_pp| / 2,

with H_pp the block of H = X'X + S_lambda over the penalized directions. Likelihood-ratio tests
between models with different fixed effects need it (REML likelihoods are not comparable then).
With U spanning the unpenalized directions and M = U'H^{-1}U, log|H_pp| = log|H| + log|M|, so
ML = REML (with n in place of n - M_p) + log|M| / 2; M is M_p x M_p and its derivatives in
log lambda come from a few structured solves, keeping the block elimination of ``linalg``.
"""

from __future__ import annotations

import numpy as np

from analysis.gamm.design import Design
from analysis.gamm.linalg import Factorization, penalty_times_beta


def unpenalized_basis(design: Design) -> np.ndarray:
    """Orthonormal p_f x M_p basis of the fixed-block directions no penalty touches."""
    cols = []
    pf = design.p_fixed
    for t in design.terms:
        if t.fixed_slice is None:
            continue
        sl = t.fixed_slice
        if t.penalty is None:
            vecs = np.eye(t.n_coef)
        else:
            vals, v = np.linalg.eigh(t.penalty)
            vecs = v[:, vals <= vals.max() * 1e-10]
        for j in range(vecs.shape[1]):
            full = np.zeros(pf)
            full[sl] = vecs[:, j]
            cols.append(full)
    return np.column_stack(cols) if cols else np.zeros((pf, 0))


def ml_correction(
    design: Design, fac: Factorization, lam: np.ndarray, u: np.ndarray
) -> tuple[float, np.ndarray, np.ndarray]:
    """log|M| / 2 and its gradient and Hessian in log lambda."""
    m = lam.size
    if u.shape[1] == 0:
        return 0.0, np.zeros(m), np.zeros((m, m))
    gf = fac.p @ u
    gr = -np.einsum("gtf,fm->gtm", fac.w, gf) if fac.w.size else np.zeros((0, 0, u.shape[1]))
    mm = u.T @ gf
    mm = (mm + mm.T) / 2.0
    minv = np.linalg.inv(mm)
    sign, logdet = np.linalg.slogdet(mm)
    # lambda_j S_j G: the same structured product as for a coefficient vector
    sg = [penalty_times_beta(design, lam, gf, gr, j) for j in range(m)]
    a = [sf.T @ gf + np.einsum("gtm,gtn->mn", sr, gr) for sf, sr in sg]
    y = [fac.solve(sf, sr) for sf, sr in sg]
    grad = np.array([-0.5 * np.sum(minv * a_i) for a_i in a])
    hess = np.zeros((m, m))
    ma = [minv @ a_i for a_i in a]
    for i in range(m):
        for j in range(i, m):
            c_ij = sg[i][0].T @ y[j][0] + np.einsum("gtm,gtn->mn", sg[i][1], y[j][1])
            h = -np.sum(ma[j] * ma[i].T) + 2.0 * np.sum(minv * c_ij)
            if i == j:
                h -= np.trace(ma[i])
            hess[i, j] = hess[j, i] = 0.5 * h
    return 0.5 * float(logdet), grad, hess
