"""Single-precision screening of block values, with a float64 recheck of the pairs it cannot
decide, so that a pass run in float32 returns exactly what the float64 pass would.

A float32 product of the augmented vectors (`geometry`) costs a third of a float64 one on
AVX2 and halves the memory traffic of every comparison after it, but its error is about
2²⁹ times larger. `margin` bounds |s32 − c²| for every pair (c the canonical distance), so a
pair with s32 < lo2 − margin has a float64 block value below lo2 and one with
s32 > hi2 + margin a value above hi2. The pairs in between (a thin shell around the
thresholds: about 10⁻⁵·R² wide) get a float64 block value from a row-wise dot product, which
obeys the same error bound as a BLAS product's (any summation order does), and are then
decided exactly as in the float64 pass. Counts, brackets and canonical-distance decisions
therefore equal the float64 pass's; only the route to them differs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .geometry import EXACT_CHUNK, Geometry

_U32 = float(np.finfo(np.float32).eps) / 2  # unit roundoff of float32
#: use float32 only while its margin stays below this share of the squared threshold
#: (populations with far outliers have wide margins: float64 decides fewer pairs twice)
_MAX_MARGIN_SHARE = 0.01


@dataclass
class Operands:
    """The two sides of a pass: float64 rows on the ops' device (`A`, `B`), and, where the
    pass may screen in float32, float32 rows and the host float64 rows for the recheck."""

    A: Any
    B: Any
    A64: np.ndarray
    B64: np.ndarray
    A32: np.ndarray | None = None
    B32: np.ndarray | None = None
    margin: float = math.inf
    block_rows: int = 128  # block sides for this pass (float32 blocks may be larger)
    block_cols: int = 1024
    kernel: Any = None  # a compiled row-block kernel for minority passes (`fused_minority`)

    @property
    def single(self) -> bool:
        return self.A32 is not None


def float32_margin(geo: Geometry) -> float:
    """A bound on |s32 − c²| over all pairs of the population.

    With R² = max |xc|²: rounding xc to float32 moves a squared distance by ≤ 8.01·u₃₂R²,
    rounding the norms adds ≤ 2·u₃₂R², and the float32 product of d + 2 terms whose
    magnitudes sum to ≤ 4R² errs by ≤ γ_{d+2}·4R²; geo.tol covers the float64 side (centering
    and the canonical formula). Doubled for margin."""
    d = geo.X.shape[1]
    r2 = float(geo.A[:, -2].max()) if len(geo.A) else 0.0
    k = d + 2
    gamma = k * _U32 / (1 - k * _U32)
    return 2.0 * ((8.01 + 2.0) * _U32 * r2 + gamma * 4.0 * r2 + geo.tol) + 1e-300


def below_f32(x: float) -> np.float32:
    """The largest float32 ≤ x (a comparison `s32 < below_f32(x)` implies s32 < x)."""
    f = np.float32(x)
    return np.nextafter(f, np.float32(-np.inf)) if float(f) > x else f


def above_f32(x: float) -> np.float32:
    """The smallest float32 ≥ x."""
    f = np.float32(x)
    return np.nextafter(f, np.float32(np.inf)) if float(f) < x else f


def operands(
    ops: Any, geo: Geometry, rows: np.ndarray, cols: np.ndarray, thresholds: list[float]
) -> Operands:
    """Both sides of a pass over rows × cols; float32 ones when the ops screen in single
    precision and the margin is small beside every finite squared threshold."""
    A64, B64 = geo.A[rows], geo.B[cols]
    double = Operands(None, None, A64, B64, block_rows=ops.block_rows, block_cols=ops.block_cols)
    if not getattr(ops, "single", False):
        return _put(ops, double)
    margin = float32_margin(geo)
    finite = [abs(t) for t in thresholds if math.isfinite(t)]
    if finite and margin > _MAX_MARGIN_SHARE * max(min(finite), geo.tol):
        return _put(ops, double)
    br, bc = ops.single_blocks
    return Operands(None, None, A64, B64, _single(A64, True), _single(B64), margin, br, bc)


def double_operands(ops: Any, geo: Geometry, rows: np.ndarray, cols: np.ndarray) -> Operands:
    """Float64 operands (proximity reads every pair's value)."""
    A64, B64 = geo.A[rows], geo.B[cols]
    return _put(
        ops, Operands(None, None, A64, B64, block_rows=ops.block_rows, block_cols=ops.block_cols)
    )


def _put(ops: Any, op: Operands) -> Operands:
    op.A, op.B = ops.put(op.A64), ops.put(op.B64)
    return op


def _single(M: np.ndarray, rows_side: bool = False) -> np.ndarray:
    """The float32 augmented vectors: coordinates rounded once, norms from the rounded
    coordinates (in float64, then rounded), so the two sides describe the same points."""
    d = M.shape[1] - 2
    xc = (M[:, :d] * -0.5 if rows_side else M[:, :d]).astype(np.float32)
    nrm = np.einsum("ij,ij->i", xc.astype(np.float64), xc.astype(np.float64)).astype(np.float32)
    out = np.empty((len(M), d + 2), dtype=np.float32)
    if rows_side:
        out[:, :d] = -2.0 * xc
        out[:, d], out[:, d + 1] = nrm, 1.0
    else:
        out[:, :d] = xc
        out[:, d], out[:, d + 1] = 1.0, nrm
    return out


def row_dots(A: np.ndarray, B: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """A[i]·B[j] pair by pair in float64: a valid block value for each pair."""
    out = np.empty(len(i))
    for s in range(0, len(i), EXACT_CHUNK):
        ii, jj = i[s : s + EXACT_CHUNK], j[s : s + EXACT_CHUNK]
        out[s : s + len(ii)] = np.einsum("ij,ij->i", A[ii], B[jj])
    return out
