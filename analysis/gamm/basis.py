"""Penalized regression spline bases of one covariate, with mgcv's conventions.

* ``tp``: thin-plate regression spline (Wood 2003) of order m = 2 in one dimension. The radial
  basis eta(r) = r^3 / 12 over the unique covariate values is eigen-decomposed and truncated to
  the k eigenvectors of largest |eigenvalue| (none when there are exactly k values); the
  polynomial null space {1, x} is kept and the truncated radial part is constrained orthogonal
  to it. Penalty = the bending energy. The columns are built exactly as mgcv's C code
  (``tprs_setup``) builds them: eigenvectors in decreasing eigenvalue order, the constraint's
  null space from its Householder factorization (``QT``), every column scaled to unit root mean
  square over the data. Any basis of the same span fits the same model, but Wood's (2013) test
  of a smooth with a fractional reference rank is not invariant to the basis, so summary
  statistics agree with mgcv's only when the columns are mgcv's own.
* ``cr``: cubic regression spline with knots placed as mgcv's ``place.knots`` does (evenly through
  the sorted unique values), parameterised by the function's values at the knots; penalty is the
  integrated squared second derivative.

Both then absorb mgcv's identifiability constraint (columns of the basis sum to zero over the
data) with the Householder reflection that R's ``qr()`` builds, so the spline spans exactly what
mgcv's does. Written here because neither pygam nor statsmodels exposes mgcv's tp basis or its
constraint absorption.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAX_TP_KNOTS = 2000  # mgcv subsamples the unique values above this (its xt$max.knots default)
_RADIAL_CELLS = 1_000_000  # values x knots evaluated at once by SmoothBasis.raw_design


class BasisError(ValueError):
    """The covariate cannot carry the requested basis (too few distinct values...)."""


@dataclass(frozen=True)
class SmoothBasis:
    """A constrained smooth of one covariate: ``design(x) @ coef`` is the centred smooth."""

    kind: str
    k: int
    knots: np.ndarray
    shift: float
    # tp: maps [E(x, knots) | 1 | x] to the unconstrained k columns (mgcv's UZ, column-scaled);
    # cr: second-derivative map
    raw_map: np.ndarray
    constraint: np.ndarray  # k x (k-1): absorbs the sum-to-zero constraint
    penalty: np.ndarray  # (k-1) x (k-1), already constrained
    null_space_dim: int  # unpenalized directions left after the constraint

    def raw_design(self, x: np.ndarray) -> np.ndarray:
        """Unconstrained k-column basis at ``x``. The thin-plate radial part is evaluated once
        per distinct value and in row chunks, so its temporary stays a few MB whatever the
        number of rows (it is rows x knots, up to 2,000 knots)."""
        x = np.asarray(x, dtype=float)
        if self.kind != "tp":
            return _cr_design(x, self.knots, self.raw_map)
        values, inverse = np.unique(x, return_inverse=True)
        out = np.empty((values.size, self.raw_map.shape[1]))
        step = max(1, _RADIAL_CELLS // self.knots.size)
        for lo in range(0, values.size, step):
            xs = values[lo : lo + step] - self.shift
            radial = np.abs(xs[:, None] - self.knots[None, :]) ** 3 / 12.0
            out[lo : lo + step] = np.column_stack([radial, np.ones_like(xs), xs]) @ self.raw_map
        return out[inverse.ravel()]

    def design(self, x: np.ndarray) -> np.ndarray:
        """Constrained (k-1)-column basis at ``x``: what enters the model matrix."""
        return self.raw_design(x) @ self.constraint


def householder_null_basis(c: np.ndarray) -> np.ndarray:
    """k x (k-1) basis of {b : c'b = 0}, as columns 2..k of LINPACK's Householder Q for c.

    R's ``qr(t(C))`` (LINPACK dqrdc2) reflects with u = c / (sign(c_1) ||c||) + e_1 and
    H = I - u u' / u_1; mgcv multiplies the basis by H and drops the first column.
    """
    c = np.asarray(c, dtype=float).ravel()
    norm = float(np.linalg.norm(c))
    if norm == 0.0:
        raise BasisError("identifiability constraint is zero: the smooth is degenerate")
    scale = norm if c[0] == 0 else np.copysign(norm, c[0])
    u = c / scale
    u[0] += 1.0
    h = np.eye(c.size) - np.outer(u, u) / u[0]
    return h[:, 1:]


def _check_distinct(x: np.ndarray, k: int, name: str) -> np.ndarray:
    xu = np.unique(x)
    if xu.size < 2:
        raise BasisError(f"{name} is constant ({xu[0] if xu.size else 'no values'}): no smooth")
    if xu.size < k:
        raise BasisError(
            f"{name} has {xu.size} distinct values but the basis needs k = {k}; use a smaller k"
        )
    return xu


def mgcv_qt(a: np.ndarray) -> np.ndarray:
    """Q of mgcv's ``QT()``: A Q = [0, T] with T reverse lower triangular (A is M x c, M <= c).

    Row i of A is reflected into its element c - i - 1, so the first c - M columns of Q span
    {delta : A delta = 0}; this is the null space mgcv's thin-plate basis uses.
    """
    a = np.array(a, dtype=float)
    rows, cols = a.shape
    q = np.eye(cols)
    for i in range(rows):
        n = cols - i
        p = a[i, :n].copy()
        m = float(np.max(np.abs(p)))
        if m:
            p /= m
        lsq = float(np.sqrt(p @ p))
        if p[n - 1] < 0.0:
            lsq = -lsq
        p[n - 1] += lsq
        g = 1.0 / (lsq * p[n - 1]) if lsq else 0.0
        a[i + 1 :, :n] -= g * np.outer(a[i + 1 :, :n] @ p, p)
        q[:, :n] -= g * np.outer(q[:, :n] @ p, p)
    return q


def _radial_map(knots: np.ndarray, k: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """mgcv's radial columns: (map from E(x, knots) to the k - m radial columns, their penalty).

    With exactly k knots E is used whole (mgcv's "pure knot" case); otherwise its k eigenpairs of
    largest |eigenvalue|, in decreasing eigenvalue order as mgcv's Lanczos routine returns them.
    Eigenvector signs do not matter: they only flip the signs of final columns.
    """
    e = np.abs(knots[:, None] - knots[None, :]) ** 3 / 12.0
    t = np.column_stack([np.ones_like(knots), knots])
    if knots.size == k:
        z = mgcv_qt(t.T)[:, : k - m]
        pen = z.T @ e @ z
        return z, (pen + pen.T) / 2.0
    if knots.size > 4 * k + 40:
        # only the k leading eigenpairs are needed: Lanczos, as mgcv does
        from scipy.sparse.linalg import eigsh

        values, vectors = eigsh(e, k=k, which="LM", v0=np.ones(knots.size), tol=1e-12)
    else:
        values, vectors = np.linalg.eigh(e)
    chosen = np.argsort(-np.abs(values), kind="stable")[:k]
    chosen = chosen[np.argsort(-values[chosen], kind="stable")]
    d_k, u_k = values[chosen], vectors[:, chosen]
    z = mgcv_qt(t.T @ u_k)[:, : k - m]
    pen = z.T @ np.diag(d_k) @ z
    return u_k @ z, (pen + pen.T) / 2.0


def tp_basis(x: np.ndarray, k: int = 10, name: str = "x") -> SmoothBasis:
    """Thin-plate regression spline basis (mgcv ``bs = "tp"``, m = 2) with its constraint."""
    x = np.asarray(x, dtype=float)
    if k < 3:
        raise BasisError(f"k = {k} is too small for a thin-plate spline (need k >= 3)")
    _check_distinct(x, k, name)
    shift = float(np.mean(x))
    knots = np.unique(x - shift)
    if knots.size > MAX_TP_KNOTS:
        # mgcv draws a random subsample with R's RNG; we take evenly spaced order statistics
        idx = np.round(np.linspace(0, knots.size - 1, MAX_TP_KNOTS)).astype(int)
        knots = knots[idx]
    m = 2
    radial_map, radial_pen = _radial_map(knots, k, m)
    uz = np.zeros((knots.size + m, k))
    uz[: knots.size, : k - m] = radial_map
    uz[knots.size :, k - m :] = np.eye(m)
    raw_pen = np.zeros((k, k))
    raw_pen[: k - m, : k - m] = radial_pen
    unscaled = SmoothBasis("tp", k, knots, shift, uz, np.eye(k), raw_pen, m)
    # mgcv rescales every column to root mean square 1 over the data (X -> XW, S -> WSW)
    w = 1.0 / np.sqrt(np.mean(unscaled.raw_design(x) ** 2, axis=0))
    pen = raw_pen * np.outer(w, w)
    basis = SmoothBasis("tp", k, knots, shift, uz * w, np.eye(k), (pen + pen.T) / 2.0, m)
    return _absorb_sum_to_zero(basis, x)


def place_knots(x: np.ndarray, nk: int) -> np.ndarray:
    """mgcv's ``place.knots``: nk knots evenly spread through the sorted unique values."""
    xu = np.unique(x)
    n = xu.size
    if nk == 2:
        return np.array([xu[0], xu[-1]])
    delta = (n - 1) / (nk - 1)
    i = np.arange(1, nk - 1)
    lbi = np.floor(delta * i).astype(int) + 1  # 1-based lower index
    frac = delta * i + 1 - lbi
    knots = np.empty(nk)
    knots[0], knots[-1] = xu[0], xu[-1]
    knots[1:-1] = xu[lbi - 1] * (1 - frac) + xu[lbi] * frac
    return knots


def _cr_matrices(knots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """F (k x k, maps knot values to second derivatives) and the penalty D'B^{-1}D."""
    k = knots.size
    h = np.diff(knots)
    d = np.zeros((k - 2, k))
    b = np.zeros((k - 2, k - 2))
    for i in range(k - 2):
        d[i, i] = 1.0 / h[i]
        d[i, i + 1] = -1.0 / h[i] - 1.0 / h[i + 1]
        d[i, i + 2] = 1.0 / h[i + 1]
        b[i, i] = (h[i] + h[i + 1]) / 3.0
        if i < k - 3:
            b[i, i + 1] = b[i + 1, i] = h[i + 1] / 6.0
    binv_d = np.linalg.solve(b, d)
    f = np.zeros((k, k))
    f[1:-1] = binv_d
    pen = d.T @ binv_d
    return f, (pen + pen.T) / 2.0


def _cr_design(x: np.ndarray, knots: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Cardinal natural cubic spline basis; linear beyond the boundary knots (as mgcv)."""
    k = knots.size
    h = np.diff(knots)
    out = np.zeros((x.size, k))
    inside = (x >= knots[0]) & (x <= knots[-1])
    xi = x[inside]
    j = np.clip(np.searchsorted(knots, xi, side="right") - 1, 0, k - 2)
    hj = h[j]
    am = (knots[j + 1] - xi) / hj
    ap = (xi - knots[j]) / hj
    cm = ((knots[j + 1] - xi) ** 3 / hj - hj * (knots[j + 1] - xi)) / 6.0
    cp = ((xi - knots[j]) ** 3 / hj - hj * (xi - knots[j])) / 6.0
    rows = np.flatnonzero(inside)
    block = cm[:, None] * f[j] + cp[:, None] * f[j + 1]
    block[np.arange(xi.size), j] += am
    block[np.arange(xi.size), j + 1] += ap
    out[rows] = block
    hl, hr = h[0], h[-1]
    # linear continuation with the boundary value and slope (second derivative there is 0)
    lo_value, lo_slope = np.eye(k)[0], (np.eye(k)[1] - np.eye(k)[0]) / hl - hl / 6.0 * f[1]
    hi_value = np.eye(k)[k - 1]
    hi_slope = (np.eye(k)[k - 1] - np.eye(k)[k - 2]) / hr + hr / 6.0 * f[k - 2]
    lo, hi = x < knots[0], x > knots[-1]
    out[lo] = lo_value[None, :] + (x[lo] - knots[0])[:, None] * lo_slope[None, :]
    out[hi] = hi_value[None, :] + (x[hi] - knots[-1])[:, None] * hi_slope[None, :]
    return out


def cr_basis(x: np.ndarray, k: int = 10, name: str = "x") -> SmoothBasis:
    """Cubic regression spline basis (mgcv ``bs = "cr"``) with its constraint absorbed."""
    x = np.asarray(x, dtype=float)
    if k < 3:
        raise BasisError(f"k = {k} is too small for a cubic regression spline (need k >= 3)")
    _check_distinct(x, k, name)
    knots = place_knots(x, k)
    f, pen = _cr_matrices(knots)
    basis = SmoothBasis("cr", k, knots, 0.0, f, np.eye(k), pen, 2)
    return _absorb_sum_to_zero(basis, x)


def _absorb_sum_to_zero(basis: SmoothBasis, x: np.ndarray) -> SmoothBasis:
    raw = basis.raw_design(x)
    z = householder_null_basis(raw.sum(axis=0))
    pen = z.T @ basis.penalty @ z
    return SmoothBasis(
        basis.kind,
        basis.k,
        basis.knots,
        basis.shift,
        basis.raw_map,
        z,
        (pen + pen.T) / 2.0,
        basis.null_space_dim - 1,
    )


def make_basis(kind: str, x: np.ndarray, k: int = 10, name: str = "x") -> SmoothBasis:
    """Dispatch on mgcv's basis name."""
    if kind == "tp":
        return tp_basis(x, k, name)
    if kind == "cr":
        return cr_basis(x, k, name)
    raise BasisError(f"unknown basis {kind!r}: use 'tp' or 'cr'")
