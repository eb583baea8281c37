"""Where block distances may be trusted, and the canonical distance where they may not.

Block distances come from one matrix product of augmented vectors (|a|² − 2a·b + |b|²),
fast but with rounding error; `Geometry.tol` bounds that error rigorously, and every pass
that compares a distance with a threshold recomputes the pairs within `tol` of it with
`canonical_distances`. Keeping both here keeps the bound next to the formula it covers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

_U = np.finfo(np.float64).eps / 2  # unit roundoff
EXACT_CHUNK = 1 << 18  # pairs per chunk of canonical distances (bounded temporaries)


def canonical_distances(X: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """‖X[i] − X[j]‖ with squared differences sorted ascending and summed left to right.

    Column by column on X's transpose (gathers of one coordinate at a time, a sort along
    the first axis, then acc += row): twice as fast as sorting rows, the same numbers.
    """
    out = np.empty(len(i), dtype=np.float64)
    XT = _transposed(X)
    d = XT.shape[0]
    for s in range(0, len(i), EXACT_CHUNK):
        ii, jj = i[s : s + EXACT_CHUNK], j[s : s + EXACT_CHUNK]
        sq = np.empty((d, len(ii)))
        for c in range(d):
            col = XT[c]
            diff = col[ii] - col[jj]
            np.multiply(diff, diff, out=sq[c])
        if d > 1:
            sq.sort(axis=0)
        acc = out[s : s + len(ii)]
        acc[:] = sq[0]
        for c in range(1, d):
            acc += sq[c]
        np.sqrt(acc, out=acc)
    return out


def last_square_within(eps: float) -> float:
    """The largest float64 s with sqrt(s) ≤ ε (sqrt is correctly rounded and monotone, so
    sqrt(s) ≤ ε exactly when s ≤ this): a canonical squared sum can be compared with ε
    without a sqrt, as on a device whose sqrt is not correctly rounded."""
    import math

    s = eps * eps
    while s > 0 and math.sqrt(s) > eps:
        s = float(np.nextafter(s, 0.0))
    while math.sqrt(float(np.nextafter(s, math.inf))) <= eps:
        s = float(np.nextafter(s, math.inf))
    return s


_TRANSPOSED: dict[int, tuple[Any, np.ndarray]] = {}


def _transposed(X: np.ndarray) -> np.ndarray:
    """X.T as a C-contiguous array, kept for the last few populations (called per block)."""
    import weakref

    key = id(X)
    hit = _TRANSPOSED.get(key)
    if hit is not None and hit[0]() is X:
        return hit[1]
    XT = np.ascontiguousarray(X.T)
    try:
        ref = weakref.ref(X)
    except TypeError:  # pragma: no cover - plain ndarrays support weak references
        return XT
    if len(_TRANSPOSED) >= 4:
        _TRANSPOSED.clear()
    _TRANSPOSED[key] = (ref, XT)
    return XT


@dataclass
class Geometry:
    X: np.ndarray  # the population as given (canonical distances use it)
    A: np.ndarray  # rows [-2·xc, |xc|², 1]
    B: np.ndarray  # rows [xc, 1, |xc|²]; A[i]·B[j] = |xc_i − xc_j|²
    tol: float

    def band(self, eps: float) -> tuple[float, float]:
        """The block values (squared distances) that may fall on either side of ε: pairs
        in [lo2, hi2] need their canonical distance, the rest are decided by the product."""
        return eps * eps - self.tol, eps * eps + self.tol


def make_geometry(X: np.ndarray) -> Geometry:
    """Augmented vectors for block products, and `tol`, a bound on their error.

    With xc = x − mean and R² = max |xc|², the product's error is ≤ γ_{d+2}·4R², norms
    add γ_d·R² each, centering perturbs a squared distance by ≤ 8uR², and the canonical
    formula itself errs by ≤ γ_{d+1}·4R²; 32(d+4)uR² covers their sum with margin.
    """
    xc = X - X.mean(axis=0)
    nrm = np.einsum("ij,ij->i", xc, xc)
    ones = np.ones((len(X), 1))
    A = np.ascontiguousarray(np.hstack([-2.0 * xc, nrm[:, None], ones]))
    B = np.ascontiguousarray(np.hstack([xc, ones, nrm[:, None]]))
    r2 = float(nrm.max()) if len(nrm) else 0.0
    tol = 32.0 * (X.shape[1] + 4) * _U * max(r2, 1e-300) + 1e-300
    return Geometry(X=X, A=A, B=B, tol=tol)
