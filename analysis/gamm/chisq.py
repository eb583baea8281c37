"""Upper tail of a weighted sum of chi-squares, by Imhof's (1961) inversion formula.

mgcv refers its test statistics to sum_i a_i chi^2_{h_i} (some a_i negative, which turns an
F-type ratio into "P(mixture > 0)"); it evaluates that with Davies' (1980) algorithm. Imhof's
integral gives the same probability to quadrature accuracy:

    P(Q > x) = 1/2 + (1/pi) int_0^inf sin(theta(u)) / (u rho(u)) du,
    theta(u) = sum_i h_i atan(a_i u) / 2 - x u / 2,  rho(u) = prod_i (1 + a_i^2 u^2)^(h_i / 4).

Neither scipy nor statsmodels ships this distribution. ``imhof_sf`` is the quadrature on its
own, fed by functions of u, so that ``analysis.gamm.spectral`` can supply theta and rho of a
mixture whose weights are the eigenvalues of a matrix it never decomposes.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import integrate

_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(20)
#: rows of u evaluated at once against all weights (bounds the u x weights temporaries)
_CHUNK_CELLS = 1_000_000
#: the body of the integral is integrated by panels up to this u (weights scaled to max 1)
BODY_END = 400.0

#: u (sorted array) -> (sum_i h_i atan(a_i u), sum_i h_i log(1 + a_i^2 u^2)), weights scaled
Spectrum = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


def imhof_sf(x: float, spectrum: Spectrum, body_end: float = BODY_END) -> float:
    """P(Q > x) for the mixture whose weights, scaled to max |a_i| = 1 (x scaled alike), give
    ``spectrum``: composite Gauss-Legendre quadrature of Imhof's integral up to where its
    envelope 1 / (u rho(u)) falls below 1e-14."""

    def log_rho(u: np.ndarray) -> np.ndarray:
        return spectrum(u)[1] / 4.0

    def phi(u: np.ndarray) -> np.ndarray:
        return spectrum(u)[0] / 2.0

    upper = 1e-3
    while log_rho(np.array([upper]))[0] + np.log(upper) < 33.0 and upper < 1e12:
        upper *= 1.5
    # body: composite Gauss-Legendre with panels placed by the measured phase of the integrand
    # (at most ~pi/2 of phase per 20-node panel), plus an even grid for the envelope
    body_end = min(upper, body_end)
    pre = np.linspace(0.0, body_end, 4001)
    phase = phi(pre) - x * pre / 2.0
    cum = np.concatenate([[0.0], np.cumsum(np.abs(np.diff(phase)))])
    n_panels = int(min(20000, max(100, np.ceil(cum[-1] / (np.pi / 2.0)))))
    edges = np.unique(
        np.concatenate(
            [
                np.interp(np.linspace(0.0, cum[-1], n_panels + 1), cum, pre),
                np.linspace(0.0, body_end, 101),
                np.geomspace(min(1e-3, body_end), body_end, 41),
            ]
        )
    )
    lo, hi = edges[:-1], edges[1:]
    mid, half = (lo + hi) / 2.0, (hi - lo) / 2.0
    u = (mid[:, None] + half[:, None] * _GL_NODES[None, :]).ravel()
    wts = (half[:, None] * _GL_WEIGHTS[None, :]).ravel()
    atan_sum, log_sum = spectrum(u)
    vals = np.sin(atan_sum / 2.0 - x * u / 2.0) * np.exp(-log_sum / 4.0) / u
    total = float(vals @ wts)
    if upper > body_end:
        # slowly decaying tail (few, small degrees of freedom): split sin(phi - x u / 2) into
        # Fourier integrals with smooth amplitudes (QUADPACK's QAWF)
        def amp(u: float, trig) -> float:
            uu = np.array([u])
            return float(trig(phi(uu)[0]) * np.exp(-log_rho(uu)[0]) / u)

        if x != 0.0:
            c, _ = integrate.quad(amp, body_end, np.inf, args=(np.sin,), weight="cos", wvar=x / 2.0)
            s_, _ = integrate.quad(
                amp, body_end, np.inf, args=(np.cos,), weight="sin", wvar=x / 2.0
            )
            total += c - s_
        else:
            t, _ = integrate.quad(amp, body_end, np.inf, args=(np.sin,), limit=200)
            total += t
    p = 0.5 + total / np.pi
    return float(min(1.0, max(0.0, p)))


def weight_spectrum(a: np.ndarray, h: np.ndarray) -> Spectrum:
    """``Spectrum`` of explicit (already scaled) weights a with degrees of freedom h."""

    def spectrum(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        atan_sum = np.empty(u.size)
        log_sum = np.empty(u.size)
        step = max(1, _CHUNK_CELLS // max(1, a.size))
        for start in range(0, u.size, step):
            au = np.multiply.outer(u[start : start + step], a)
            atan_sum[start : start + step] = np.arctan(au) @ h
            log_sum[start : start + step] = np.log1p(np.square(au)) @ h
        return atan_sum, log_sum

    return spectrum


def mixture_sf(x: float, weights: np.ndarray, dfs: np.ndarray | None = None) -> float:
    """P(sum_i weights_i chi^2_{dfs_i} > x)."""
    a = np.asarray(weights, dtype=float)
    h = np.ones_like(a) if dfs is None else np.asarray(dfs, dtype=float)
    keep = a != 0
    a, h = a[keep], h[keep]
    if a.size == 0:
        return float(x < 0)
    scale = float(np.max(np.abs(a)))
    return imhof_sf(x / scale, weight_spectrum(a / scale, h))


def f_ratio_mixture_sf(stat: float, weights: np.ndarray, res_df: float) -> float:
    """P(sum_i w_i chi^2_1 > stat * chi^2_k / k), k = round(res_df): the F-type version mgcv uses."""
    k = max(1, int(round(res_df)))
    w = np.concatenate([np.asarray(weights, dtype=float), [-stat / k]])
    dfs = np.concatenate([np.ones(len(weights)), [k]])
    return mixture_sf(0.0, w, dfs)
