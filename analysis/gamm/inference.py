"""Wood's tests for smooth terms (Wood 2013, Biometrika 100:221) and random effects (Wood 2013,
Biometrika 100:1005; for the terms of the blocked factor see ``re_test``), EDFs, and AIC with
the smoothing-parameter uncertainty correction of Wood, Pya & Saefken (2016, JASA 111:1548),
following mgcv's conventions (its ``summary.gam``, ``testStat``, ``reTest`` and ``logLik.gam``)
so that the numbers agree with mgcv.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg as sla
from scipy import sparse, stats

from analysis.gamm.chisq import f_ratio_mixture_sf, mixture_sf
from analysis.gamm.design import Design, TermInfo
from analysis.gamm.linalg import CrossProducts, Factorization, cross_product_root

# above this many coefficients the Cholesky-derivative AIC term is skipped (see edf2_total)
DENSE_AIC_MAX_P = 1600


@dataclass
class TestResult:
    stat: float  # F (or chi-square / rank when the scale is known)
    ref_df: float
    p: float


# ---- index bookkeeping ----------------------------------------------------------------------


def term_index(design: Design, term: TermInfo) -> np.ndarray:
    """Indices of a term's coefficients in the internal order (fixed block, then random block
    group-major: position p_f + g * r + t)."""
    if term.fixed_slice is not None:
        return np.arange(term.fixed_slice.start, term.fixed_slice.stop)
    r = design.n_random_terms
    return design.p_fixed + np.arange(design.n_groups) * r + term.random_index


def mgcv_order(design: Design) -> np.ndarray:
    """Internal indices listed in mgcv's coefficient order (terms in formula order)."""
    return np.concatenate([term_index(design, t) for t in design.terms])


def full_crossprod(design: Design, cp: CrossProducts) -> sparse.csr_matrix:
    """X'X in the internal order as a sparse matrix."""
    pf, q, r = design.p_fixed, design.n_groups, design.n_random_terms
    p = pf + q * r
    rows, cols, vals = [], [], []
    fi, fj = np.meshgrid(np.arange(pf), np.arange(pf), indexing="ij")
    rows.append(fi.ravel())
    cols.append(fj.ravel())
    vals.append(cp.a.ravel())
    if r:
        g = np.arange(q)
        for t in range(r):
            ri = (pf + g * r + t)[:, None] * np.ones((1, pf), dtype=int)
            ci = np.ones((q, 1), dtype=int) * np.arange(pf)[None, :]
            rows += [ri.ravel(), ci.ravel()]
            cols += [ci.ravel(), ri.ravel()]
            vals += [cp.b[:, t, :].ravel(), cp.b[:, t, :].ravel()]
            for u in range(r):
                rows.append(pf + g * r + t)
                cols.append(pf + g * r + u)
                vals.append(cp.d[:, t, u])
    m = sparse.coo_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(p, p)
    )
    return m.tocsr()


def crossprod_times(design: Design, cp: CrossProducts, v: np.ndarray) -> np.ndarray:
    """X'X v (internal order, v: p x m) from the structured cross products, without forming
    X'X: O(q r p_f m)."""
    pf, q, r = design.p_fixed, design.n_groups, design.n_random_terms
    vf = v[:pf]
    out = np.empty_like(v)
    out[:pf] = cp.a @ vf
    if r:
        vr = v[pf:].reshape(q, r, -1)
        out[:pf] += np.einsum("gtf,gtm->fm", cp.b, vr)
        rr = np.einsum("gtf,fm->gtm", cp.b, vf) + np.einsum("gtu,gum->gtm", cp.d, vr)
        out[pf:] = rr.reshape(q * r, -1)
    return out


def dense_inverse(design: Design, fac: Factorization) -> np.ndarray:
    """H^{-1} (internal order) assembled from its blocks; O(p^2) memory."""
    pf, q, r = design.p_fixed, design.n_groups, design.n_random_terms
    p = pf + q * r
    out = np.empty((p, p))
    out[:pf, :pf] = fac.p
    if r:
        w = fac.w.reshape(q * r, pf)
        wp = w @ fac.p
        out[pf:, :pf] = -wp
        out[:pf, pf:] = -wp.T
        rr = wp @ w.T
        g = np.arange(q)
        for t in range(r):
            for u in range(r):
                rr[g * r + t, g * r + u] += fac.dinv[:, t, u]
        out[pf:, pf:] = rr
    return out


# ---- EDF ----------------------------------------------------------------------------------


def term_edfs(design: Design, traces: np.ndarray, frob: np.ndarray) -> dict[str, tuple]:
    """Per term (edf, edf1): edf = tr of F over the term; edf1 = tr of (2F - F F) over it."""
    out = {}
    for t in design.terms:
        if t.lambda_index is None:
            out[t.label] = (float(t.n_coef), float(t.n_coef))
            continue
        j = t.lambda_index
        edf = t.n_coef - traces[j]
        edf1 = t.n_coef - float(np.sum(frob[j]))
        out[t.label] = (float(edf), float(edf1))
    return out


# ---- the smooth test (Wood 2013a) ---------------------------------------------------------


def smooth_test(
    coef: np.ndarray, xtx: np.ndarray, vp: np.ndarray, rank: float, res_df: float
) -> TestResult:
    """Wood's (2013a) Wald-type test of f_j = 0 with a rank-r pseudo-inverse of cov(f_j).

    ``xtx`` is X_j'X_j, ``vp`` the Bayesian covariance of the term's coefficients, ``rank`` its
    EDF-based rank (mgcv: min(#coef, edf1)); a fractional rank uses Wood's smooth interpolation
    between the floor and ceiling ranks, referred to a weighted chi-square/F mixture.
    ``res_df <= 0`` means the scale is known (mgcv's ``res.df = -1``): the reference is then
    the chi-square mixture itself.

    With a fractional rank the statistic depends on the term's basis, not only on its span (the
    eigenvectors' signs are fixed by their first element), so it equals mgcv's only because
    ``basis`` builds mgcv's own columns.
    """
    r_fac = cross_product_root(xtx)  # R'R = X_j'X_j, as QR of X_j would give
    v = r_fac @ vp @ r_fac.T
    v = (v + v.T) / 2.0
    vals, vecs = np.linalg.eigh(v)
    vals, vecs = vals[::-1], vecs[:, ::-1]
    sign = np.sign(vecs[0, :])
    sign[sign == 0] = 1.0
    vecs = vecs * sign
    k = max(0, int(np.floor(rank)))
    nu = abs(rank - k)
    k1 = k + 1 if nu > 0 else k
    r_est = int(np.sum(vals > vals.max() * np.finfo(float).eps ** 0.9))
    if r_est < k1:
        k1 = k = r_est
        nu = 0.0
        rank = float(r_est)
    vec = vecs[:, :k1].copy()
    if nu > 0 and k > 0:
        if k > 1:
            vec[:, : k - 1] = vec[:, : k - 1] / np.sqrt(vals[: k - 1])
        b12 = np.sqrt(max(0.0, 0.5 * nu * (1 - nu)))
        b = np.array([[1.0, b12], [b12, nu]])
        ev = np.diag(vals[k - 1 : k1] ** -0.5)
        b = ev @ b @ ev
        eb_vals, eb_vecs = np.linalg.eigh(b)
        rb = eb_vecs @ np.diag(np.sqrt(eb_vals)) @ eb_vecs.T
        vec1 = vec.copy()
        vec1[:, k - 1 : k1] = (rb @ np.diag([-1.0, 1.0]) @ vec[:, k - 1 : k1].T).T
        vec[:, k - 1 : k1] = (rb @ vec[:, k - 1 : k1].T).T
    else:
        vec = vecs[:, :1] * np.sqrt(1.0 / vals[0]) if k == 0 else vecs[:, :k] / np.sqrt(vals[:k])
        vec1 = vec
        if k == 1:
            rank = 1.0
    rp = r_fac @ coef
    d = float(np.sum((vec.T @ rp) ** 2))
    d1 = float(np.sum((vec1.T @ rp) ** 2))
    rank1 = rank
    if nu > 0:
        if k1 == 1:
            rank1 = 1.0
            weights = np.array([1.0])
        else:
            weights = np.ones(k1)
            rpp = nu + 1
            weights[k - 1] = (rpp + np.sqrt(rpp * (2 - rpp))) / 2
            weights[k1 - 1] = rpp - weights[k - 1]
        if res_df <= 0:  # known scale: chi-square mixture reference
            pval = (mixture_sf(d, weights) + mixture_sf(d1, weights)) / 2
        else:
            pval = (
                f_ratio_mixture_sf(d, weights, res_df) + f_ratio_mixture_sf(d1, weights, res_df)
            ) / 2
    else:
        pval = 2.0
    if pval > 1 and res_df <= 0:
        pval = (stats.chi2.sf(d, rank1) + stats.chi2.sf(d1, rank1)) / 2
    elif pval > 1:
        pval = (stats.f.sf(d / rank1, rank1, res_df) + stats.f.sf(d1 / rank1, rank1, res_df)) / 2
    return TestResult(d / rank, float(rank), float(min(1.0, pval)))


def smooth_term_test(
    term: TermInfo,
    beta_f: np.ndarray,
    xtx: np.ndarray,
    p: np.ndarray,
    scale: float,
    edf1: float,
    res_df: float,
) -> TestResult:
    """`smooth_test` of one smooth term of a fit, so that the Gaussian and the ordinal fit
    slice the coefficients, cross products and covariance (``scale * p``) alike."""
    sl = term.fixed_slice
    return smooth_test(beta_f[sl], xtx[sl, sl], scale * p[sl, sl], min(term.n_coef, edf1), res_df)


# ---- the random-effect test (Wood 2013b) --------------------------------------------------


def random_effect_test(
    design: Design,
    term: TermInfo,
    xtx: sparse.csr_matrix,
    hinv: np.ndarray,
    lam: np.ndarray,
    beta: np.ndarray,
    scale: float,
    res_df: float,
) -> TestResult:
    """Test of a random-effect term with the other random effects integrated out.

    mgcv's construction (``reTest``/``recov``): with O the other random terms and r the
    non-random coefficients, K = X_1'(I + Z_O Lambda_O^{-1} Z_O')X_1 + S_1 over the non-O
    columns, R_m'R_m its Schur complement on the tested term, statistic ||R_m b_m||^2 / phi,
    referred to sum_i ev_i chi^2_1 against chi^2_k / k, ev the eigenvalues of R_m V_e R_m' / phi.
    """
    m_idx = term_index(design, term)
    others = [t for t in design.terms if t.kind == "random" and t is not term]
    o_idx = np.concatenate([term_index(design, t) for t in others]) if others else np.zeros(0, int)
    o_lam = (
        np.concatenate([np.full(term_index(design, t).size, lam[t.lambda_index]) for t in others])
        if others
        else np.zeros(0)
    )
    r_idx = np.concatenate([term_index(design, t) for t in design.terms if t.kind != "random"])
    one = np.concatenate([r_idx, m_idx])
    x11 = xtx[one][:, one]
    k = x11.toarray()
    if o_idx.size:
        x1o = xtx[one][:, o_idx]
        k += (x1o @ sparse.diags(1.0 / o_lam) @ x1o.T).toarray()
    pen = np.zeros_like(k)
    pos = {int(i): n for n, i in enumerate(one)}
    for t in design.terms:
        if t.lambda_index is None or (t.kind == "random" and t is not term):
            continue
        idx = np.array([pos[int(i)] for i in term_index(design, t)])
        s = t.penalty if t.penalty is not None else np.eye(idx.size)
        pen[np.ix_(idx, idx)] += lam[t.lambda_index] * s
    k += pen
    nr = r_idx.size
    krr, krm, kmm = k[:nr, :nr], k[:nr, nr:], k[nr:, nr:]
    schur = kmm - krm.T @ sla.solve(krr, krm, assume_a="pos")
    schur = (schur + schur.T) / 2.0
    rm = sla.cholesky(schur, lower=False)
    b_m = beta[m_idx]
    stat = float(np.sum((rm @ b_m) ** 2) / scale)
    # Ve_mm / phi = [H^{-1} X'(I + Z_O Lambda_O^{-1} Z_O') X H^{-1}]_mm
    #            = Hinv_mm - sum over penalized non-O terms j of lambda_j Hinv_mj S_j Hinv_jm
    ve = hinv[np.ix_(m_idx, m_idx)].copy()
    for t in design.terms:
        if t.lambda_index is None or (t.kind == "random" and t is not term):
            continue
        j_idx = term_index(design, t)
        s = t.penalty if t.penalty is not None else np.eye(j_idx.size)
        hmj = hinv[np.ix_(m_idx, j_idx)]
        ve -= lam[t.lambda_index] * (hmj @ s @ hmj.T)
    mat = rm @ ve @ rm.T
    ev = np.linalg.eigvalsh((mat + mat.T) / 2.0)
    ev[ev < 0] = 0.0
    rank = int(np.sum(ev > ev.max() * np.finfo(float).eps ** 0.8))
    pval = f_ratio_mixture_sf(stat, ev[ev > 0], res_df)
    return TestResult(stat / rank, float(rank), pval)


# ---- AIC with the smoothing-parameter uncertainty correction ------------------------------


def edf2_total(
    design: Design,
    cp: CrossProducts,
    sum_edf: float,
    lam: np.ndarray,
    hess_full: np.ndarray,
    dbeta: np.ndarray,
    scale: float,
    xtx: sparse.csr_matrix | None = None,
) -> tuple[float, bool]:
    """sum(edf2) = tr((V_p + V_c1 + V_c2) X'X) / phi (Wood, Pya & Saefken 2016, section 3.1).

    V_c1 = J V_rho J' (J = d beta / d rho) propagates the smoothing-parameter uncertainty to
    beta; V_c2 = phi sum_ij Vr_ij (dR^{-1}/drho_i)(dR^{-1}/drho_j)' accounts for the change of
    the Cholesky factor R (R'R = H, mgcv's coefficient order). V_c2 needs dense O(p^3) algebra,
    so it is computed only when p <= DENSE_AIC_MAX_P; the flag says whether it was.
    """
    m = lam.size
    vals, vecs = np.linalg.eigh(hess_full)
    pos = vals > 0
    inv_vals = np.zeros_like(vals)
    inv_vals[pos] = 1.0 / vals[pos]
    v_rho = (vecs * inv_vals) @ vecs.T
    v_rho = v_rho[:m, :m]
    # tr(Vp X'X)/phi = tr(H^{-1} X'X) = sum(edf)
    xj = crossprod_times(design, cp, dbeta)
    c1 = float(np.sum(v_rho * (dbeta.T @ xj))) / scale
    total = sum_edf + c1
    did_c2 = False
    p = design.p
    if p <= DENSE_AIC_MAX_P and m > 0:
        xtx = full_crossprod(design, cp) if xtx is None else xtx
        order = mgcv_order(design)
        h = xtx.toarray()[np.ix_(order, order)]
        inv_order = np.empty_like(order)
        inv_order[order] = np.arange(order.size)
        blocks = []
        for t in design.terms:
            if t.lambda_index is None:
                continue
            idx = inv_order[term_index(design, t)]
            s = t.penalty if t.penalty is not None else np.eye(idx.size)
            h[np.ix_(idx, idx)] += lam[t.lambda_index] * s
            blocks.append((idx, lam[t.lambda_index] * s))
        r = sla.cholesky(h, lower=False)
        rinv = sla.solve_triangular(r, np.eye(p), lower=False)
        vr_vals = np.where(pos, vals, 0.0)
        vr = (vecs / (vr_vals + 0.1)) @ vecs.T
        vr = vr[:m, :m]
        phis, d_list = [], []
        for idx, s in blocks:
            rows = rinv[idx, :]  # dH_i = e_idx s e_idx': R^{-T} dH_i R^{-1} = rows' s rows
            a = rows.T @ (s @ rows)
            phi_a = np.triu(a)
            phi_a[np.diag_indices(p)] *= 0.5
            phis.append(phi_a)
            # d(R^{-1})/d rho_i = -R^{-1} Phi(R^{-T} dH_i R^{-1}), both factors upper triangular
            d_list.append(-sla.blas.dtrmm(1.0, rinv, phi_a))
        # tr(D_j' X'X D_i) with X'X = R'R - S and R D_i = -Phi_i:
        #   = sum(Phi_j * Phi_i) - sum_k tr(D_j[k]' S_k D_i[k])   (no dense p^3 products)
        c2 = 0.0
        for i in range(m):
            sd_i = [s @ d_list[i][idx, :] for idx, s in blocks]
            for j in range(m):
                term = float(np.sum(phis[j] * phis[i]))
                for (idx, _), sdi in zip(blocks, sd_i, strict=True):
                    term -= float(np.sum(d_list[j][idx, :] * sdi))
                c2 += vr[i, j] * term
        total += c2
        did_c2 = True
    return total, did_c2


def mgcv_aic(
    n: int, rss: float, edf_total: float, edf1_total: float, edf2_sum: float, n_coef: int
) -> tuple[float, float, float]:
    """AIC as mgcv's logLik.gam + AIC(): Gaussian log-likelihood at the ML scale rss/n,
    df = sum(edf2) + 1 (capped at edf1 and at #coef + 1)."""
    loglik = -n / 2.0 * (np.log(2.0 * np.pi * rss / n) + 1.0)
    e2 = edf2_sum if edf2_sum <= edf1_total else edf1_total
    df = min(e2 + 1.0, n_coef + 1.0)
    return float(-2.0 * loglik + 2.0 * df), float(loglik), float(df)
