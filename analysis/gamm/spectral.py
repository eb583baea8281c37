"""Spectral sums of M = diag(delta) + A B' (q x q, rank of A B' small) without its eigenvalues.

Wood's random-effect test refers its statistic to sum_k a_k chi^2_1 with a_k the q eigenvalues
of such a matrix (q = number of participants). Imhof's integral needs only, at each node u,

    sum_k log(1 - i u a_k) = log det(I - i u M)
                           = sum_i log(1 - i u delta_i) + log det(I_s - i u B'(I - i u D)^{-1} A),

whose real part is sum_k log(1 + a_k^2 u^2) / 2 and whose imaginary part is -sum_k atan(a_k u).
The s x s determinant costs O(q s^2) per node if summed over the q rows; instead the rows are
grouped by delta_i into bins of relative width 2 RATIO around a centre c, and 1/(1 - i u delta)
is expanded in powers of (delta - c), which converges geometrically (ratio <= RATIO) for every
u. Per bin the moments sum_i (delta_i - c)^k b_i a_i' are formed once, so a node costs
O(bins x TERMS x s^2), independent of q. Rows with |delta_i| below a floor (no relative bin
fits them) are summed directly. The phase of the s x s determinant is only known modulo 2 pi;
it is made continuous along a reference grid in u fine enough that it turns by less than
pi / 4 between grid points (checked, refined where not), and every other u takes the branch
nearest to the grid's interpolated phase.
"""

from __future__ import annotations

import numpy as np

#: half-width of a bin relative to its centre: the expansion's geometric ratio
RATIO = 0.2
#: terms of the expansion: RATIO ** TERMS < 1e-16
TERMS = 24
#: |delta| below FLOOR x max |delta| is summed row by row
FLOOR = 1e-3
#: nodes x s x s complex cells evaluated at once
_NODE_CELLS = 400_000


class LowRankSpectrum:
    """The eigenvalue sums of diag(delta) + A B' that Imhof's integral and a Chernoff bound
    need, from the structure (A, B: q x s)."""

    def __init__(self, delta: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
        a, b = _compress(a, b)
        self.delta, self.a, self.b = delta, a, b
        self.s = a.shape[1]
        top = float(np.max(np.abs(delta))) if delta.size else 0.0
        small = np.abs(delta) < FLOOR * top
        self.near = np.flatnonzero(small)
        order = np.flatnonzero(~small)
        order = order[np.argsort(delta[order], kind="stable")]
        self.centres, self.counts, self.moments, self.matrices = [], [], [], []
        powers = np.arange(TERMS)
        for rows in _bins(delta[order], RATIO):
            idx = order[rows]
            dv = delta[idx]
            c = (dv[0] + dv[-1]) / 2.0
            dev = dv - c
            e = dev[:, None] ** powers[None, :]  # rows x TERMS
            self.centres.append(c)
            self.counts.append(idx.size)
            self.moments.append(e.sum(axis=0))
            bi, ai = self.b[idx], self.a[idx]
            self.matrices.append(
                np.stack([(bi * e[:, k : k + 1]).T @ ai for k in range(TERMS)]).reshape(TERMS, -1)
            )
        self.centres = np.asarray(self.centres)
        self.counts = np.asarray(self.counts, dtype=float)
        self.moments = np.asarray(self.moments).reshape(-1, TERMS)
        self.f = np.concatenate(self.matrices) if self.matrices else np.zeros((0, self.s * self.s))
        sigma = float(np.linalg.norm(a, 2)) if a.size else 0.0
        #: bound on the spectral radius (B has orthonormal columns after compression)
        self.norm = max(top + sigma, 1e-300)
        self._ref_u = np.zeros(0)
        self._ref_arg = np.zeros(0)

    # ---- exact pieces --------------------------------------------------------------------

    def matvec(self, x: np.ndarray) -> np.ndarray:
        return self.delta * x + self.a @ (self.b.T @ x)

    def _raw(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(sum_i log(1 - i u delta_i), log det S(u) with its phase in (-pi, pi])."""
        bulk = np.zeros(u.size, dtype=complex)
        logdet = np.zeros(u.size, dtype=complex)
        eye = np.eye(self.s)
        chunk = max(8, _NODE_CELLS // (self.s * self.s))
        for start in range(0, u.size, chunk):
            uu = u[start : start + chunk]
            iu = 1j * uu[:, None]
            den = 1.0 - iu * self.centres[None, :]  # nodes x bins
            z = iu / den
            zk = z[:, :, None] ** np.arange(TERMS)[None, None, :]  # nodes x bins x TERMS
            k = np.arange(1, TERMS)
            b = np.log(den) @ self.counts - np.einsum(
                "nbk,bk->n", zk[:, :, 1:], self.moments[:, 1:] / k[None, :]
            )
            coef = (zk / den[:, :, None]).reshape(uu.size, -1)
            t = (coef.real @ self.f + 1j * (coef.imag @ self.f)).reshape(-1, self.s, self.s)
            if self.near.size:
                dn = self.delta[self.near]
                cn = 1.0 / (1.0 - iu * dn[None, :])  # nodes x near
                b = b + np.log1p(-iu * dn[None, :]).sum(axis=1)
                t = t + self._near_sum(cn).reshape(-1, self.s, self.s)
            mat = eye[None, :, :] - iu[:, :, None] * t
            sign, logabs = np.linalg.slogdet(mat)
            bulk[start : start + uu.size] = b
            logdet[start : start + uu.size] = logabs + 1j * np.angle(sign)
        return bulk, logdet

    def _near_sum(self, cn: np.ndarray) -> np.ndarray:
        """sum over the directly summed rows i of cn[:, i] b_i a_i' (nodes x s^2)."""
        out = np.zeros((cn.shape[0], self.s * self.s), dtype=complex)
        step = max(1, 2_000_000 // max(1, self.s * self.s))
        for lo in range(0, self.near.size, step):
            rows = self.near[lo : lo + step]
            outer = (self.b[rows][:, :, None] * self.a[rows][:, None, :]).reshape(rows.size, -1)
            part = cn[:, lo : lo + step]
            out += part.real @ outer + 1j * (part.imag @ outer)
        return out

    def _extend(self, top: float) -> None:
        """Extend the reference grid to [0, top]: steps small enough that the phase of det S
        turns by less than pi / 4 (its rate is at most ~2 s min(2 |M|, 1 / u); checked, and
        refined where a step turns more)."""
        if self._ref_u.size and self._ref_u[-1] >= top:
            return
        start = float(self._ref_u[-1]) if self._ref_u.size else 0.0
        start_arg = float(self._ref_arg[-1]) if self._ref_u.size else 0.0
        top = max(top * 1.5, start * 2.0)
        rate = 2.0 * max(1, self.s)
        knee = 0.5 / self.norm
        pieces = [np.array([start])]
        if start < knee:
            end = min(knee, top)
            pieces.append(
                np.linspace(
                    start,
                    end,
                    int(np.ceil((end - start) * self.norm * 2.0 * rate * 8.0 / np.pi)) + 2,
                )[1:]
            )
        lo = max(start, knee)
        if top > lo:
            ratio = 1.0 + np.pi / (8.0 * rate)
            pieces.append(
                np.geomspace(lo, top, int(np.ceil(np.log(top / lo) / np.log(ratio))) + 2)[1:]
            )
        grid = np.unique(np.concatenate(pieces))
        for _ in range(40):
            raw = self._raw(grid)[1].imag
            arg = np.unwrap(raw)
            arg += start_arg - arg[0]
            jump = np.abs(np.diff(arg)) > np.pi / 4.0
            if not jump.any():
                break
            grid = np.unique(np.concatenate([grid, (grid[:-1][jump] + grid[1:][jump]) / 2.0]))
        else:
            raise ArithmeticError("the phase of the determinant could not be tracked")
        self._ref_u = np.concatenate([self._ref_u[:-1], grid]) if self._ref_u.size else grid
        self._ref_arg = np.concatenate([self._ref_arg[:-1], arg]) if self._ref_arg.size else arg

    def log_det(self, u: np.ndarray) -> np.ndarray:
        """sum_k log(1 - i u a_k) on the continuous branch (u >= 0, any order)."""
        u = np.asarray(u, dtype=float)
        bulk, logdet = self._raw(u)
        if u.size:
            self._extend(float(np.max(u)))
            ref = np.interp(u, self._ref_u, self._ref_arg)
            arg = logdet.imag + 2.0 * np.pi * np.round((ref - logdet.imag) / (2.0 * np.pi))
            logdet = logdet.real + 1j * arg
        return bulk + logdet

    def imhof_spectrum(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(sum_k atan(a_k u), sum_k log(1 + a_k^2 u^2)): ``chisq.Spectrum`` of the weights."""
        total = self.log_det(u)
        return -total.imag, 2.0 * total.real

    def log_det_real(self, t: float) -> float:
        """log det(I - t M) for real t with I - t M positive definite, else inf."""
        lin = 1.0 - t * self.delta
        if np.any(lin <= 0):
            return np.inf
        small = np.eye(self.s) - t * (self.b.T @ (self.a / lin[:, None]))
        sign, logdet = np.linalg.slogdet(small)
        if sign <= 0:
            return np.inf
        return float(np.sum(np.log(lin))) + float(logdet)


def _compress(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A B' rewritten with as few columns as its numerical rank (QR of both, SVD of the core)."""
    if a.shape[1] == 0:
        return a, b
    qa, ra = np.linalg.qr(a)
    qb, rb = np.linalg.qr(b)
    x, sv, yt = np.linalg.svd(ra @ rb.T)
    keep = sv > sv[0] * 1e-14 if sv.size and sv[0] > 0 else np.zeros(sv.size, dtype=bool)
    return qa @ (x[:, keep] * sv[keep]), qb @ yt[keep].T


def _bins(values: np.ndarray, ratio: float) -> list[slice]:
    """Consecutive runs of sorted values of one sign whose half-range is at most ratio x
    |centre| (centre: the run's midrange)."""
    out = []
    start, n = 0, values.size
    first_positive = int(np.searchsorted(values, 0.0, side="right"))
    while start < n:
        lo = values[start]
        if lo > 0:
            stop = int(np.searchsorted(values, lo * (1 + ratio) / (1 - ratio), side="right"))
        else:
            hi = lo * (1 - ratio) / (1 + ratio)
            stop = min(int(np.searchsorted(values, hi, side="right")), first_positive)
        stop = max(stop, start + 1)
        out.append(slice(start, stop))
        start = stop
    return out
