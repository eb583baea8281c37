"""A row block of the minority (ε) pass as one compiled kernel (numba): the triangle of
distinct minority pairs in registers and L1, where numpy's float32 route makes a pass
over each block per step (product, comparisons, row and column counts, the search for
the bracket's pairs).

The same decisions as `passes._scan` on float32 operands, so the results equal the
float64 pass's: a pair's float32 value s32 is the product form of `screen`'s float32
augmented vectors (the same d + 2 terms, summed in another order, so `screen.float32_margin`
bounds |s32 − c²| as for sgemm); a pair more than that margin below lo2 counts as below,
one more than it above hi2 is dropped, and the pairs between get a float64 block value
(their augmented float64 vectors' dot product, any order within `tol`) decided as the
float64 pass decides them. With float64 operands (no float32 margin: far outliers) the
same code runs on them with a margin of zero.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .fused import AVAILABLE

_R = 4  # rows per register block
_W = 512  # columns per tile
BLOCK_ROWS = 256  # rows per task: a column tile read once serves 256 rows

if AVAILABLE:
    from numba import njit, types
    from numba.extending import intrinsic

    @intrinsic
    def _count_add(typingctx, a, b):  # type: ignore[no-untyped-def]
        """a + b (float32) that may be reassociated: counts of 0/1 kept as float32 sums,
        exact below 2²⁴ in any order, so that the counting loop runs in vector lanes."""

        def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
            return builder.fadd(args[0], args[1], flags=("reassoc",))

        return types.float32(types.float32, types.float32), codegen

    @njit(nogil=True, cache=True)
    def _dot(a: Any, b: Any) -> float:
        """A float64 block value: a·b in index order."""
        acc = 0.0
        for k in range(a.shape[0]):
            acc += a[k] * b[k]
        return acc

    @njit(nogil=True, fastmath={"contract"}, cache=True)
    def _triangle_kernel(  # type: ignore[no-untyped-def]
        A, na, BT, nb2, A64, B64, r0, r1, lo_s, hi_s, lo2, hi2, rows, cols
    ):
        """Rows r0:r1 of the minority against columns j > i: rows[i − r0] and
        cols[j − r0] count the partners with a block value below lo2; returns the pairs
        with block values in [lo2, hi2] as offsets from r0 and their float64 values.
        A: −2·x rows (padded to a multiple of 4 columns), na their |x|²; BT, nb2: the
        same points as columns; A64, B64: the float64 augmented vectors."""
        m = BT.shape[1]
        dp = A.shape[1]
        S = np.empty((_R, _W), dtype=A.dtype)
        cap = 1024
        ci = np.empty(cap, np.int32)
        cj = np.empty(cap, np.int32)
        cg = np.empty(cap)
        n_c = 0
        F = np.zeros(_W + 8, np.uint8)  # per column of a row: 1 where a pair may be in [lo2, hi2]
        Fw = F.view(np.uint64)
        Ct = np.zeros(_W, np.int32)  # per column of the tile: partners below lo_s
        one, zero = np.float32(1.0), np.float32(0.0)
        for c0 in range(r0, m, _W):
            w = min(_W, m - c0)
            N = nb2[c0 : c0 + w]
            Ct[:] = 0
            for g0 in range(r0, r1, _R):
                if c0 + w <= g0 + 1:  # every column of the tile is at or before these rows
                    continue
                ia, ib = g0, min(g0 + 1, r1 - 1)
                ic, id_ = min(g0 + 2, r1 - 1), min(g0 + 3, r1 - 1)
                S0, S1, S2, S3 = S[0], S[1], S[2], S[3]
                A0, A1, A2, A3 = A[ia], A[ib], A[ic], A[id_]
                n0, n1, n2, n3 = na[ia], na[ib], na[ic], na[id_]
                for j in range(w):
                    v = N[j]
                    S0[j] = n0 + v
                    S1[j] = n1 + v
                    S2[j] = n2 + v
                    S3[j] = n3 + v
                for k in range(0, dp, 4):
                    a00, a01, a02, a03 = A0[k], A0[k + 1], A0[k + 2], A0[k + 3]
                    a10, a11, a12, a13 = A1[k], A1[k + 1], A1[k + 2], A1[k + 3]
                    a20, a21, a22, a23 = A2[k], A2[k + 1], A2[k + 2], A2[k + 3]
                    a30, a31, a32, a33 = A3[k], A3[k + 1], A3[k + 2], A3[k + 3]
                    B0, B1 = BT[k, c0 : c0 + w], BT[k + 1, c0 : c0 + w]
                    B2, B3 = BT[k + 2, c0 : c0 + w], BT[k + 3, c0 : c0 + w]
                    for j in range(w):
                        b0, b1, b2, b3 = B0[j], B1[j], B2[j], B3[j]
                        S0[j] = S0[j] + a00 * b0 + a01 * b1 + a02 * b2 + a03 * b3
                        S1[j] = S1[j] + a10 * b0 + a11 * b1 + a12 * b2 + a13 * b3
                        S2[j] = S2[j] + a20 * b0 + a21 * b1 + a22 * b2 + a23 * b3
                        S3[j] = S3[j] + a30 * b0 + a31 * b1 + a32 * b2 + a33 * b3
                for r in range(min(_R, r1 - g0)):
                    i = g0 + r
                    j0 = max(0, i + 1 - c0)  # the upper triangle: j > i
                    F[:j0] = 0
                    Sr, Cr, Fr = S[r, j0:w], Ct[j0:w], F[j0:w]  # views: indices from 0
                    nf = zero
                    for j in range(w - j0):
                        v = Sr[j]
                        lt = v < lo_s
                        nf = _count_add(nf, one if lt else zero)
                        Cr[j] = Cr[j] + lt
                        Fr[j] = (v >= lo_s) & (v <= hi_s)
                    rows[i - r0] += int(nf)
                    F[w : w + 8] = 0
                    for q in range((w + 7) // 8):
                        if Fw[q] == 0:
                            continue
                        for jj in range(8 * q, 8 * q + 8):
                            if F[jj] == 0:
                                continue
                            g = _dot(A64[i], B64[c0 + jj])  # the float64 block value
                            if g < lo2:
                                rows[i - r0] += 1
                                Ct[jj] += 1
                            elif g <= hi2:
                                if n_c == cap:
                                    cap *= 2
                                    ci2 = np.empty(cap, np.int32)
                                    cj2 = np.empty(cap, np.int32)
                                    cg2 = np.empty(cap)
                                    ci2[:n_c] = ci[:n_c]
                                    cj2[:n_c] = cj[:n_c]
                                    cg2[:n_c] = cg[:n_c]
                                    ci, cj, cg = ci2, cj2, cg2
                                ci[n_c] = i - r0
                                cj[n_c] = c0 + jj - r0
                                cg[n_c] = g
                                n_c += 1
            C = cols[c0 - r0 : c0 - r0 + w]
            for j in range(w):
                C[j] += Ct[j]
        return ci[:n_c].copy(), cj[:n_c].copy(), cg[:n_c].copy()


def _padded(M: np.ndarray) -> np.ndarray:
    n, d = M.shape
    out = np.zeros((n, max(4, -(-d // 4) * 4)), dtype=M.dtype)
    out[:, :d] = M
    return out


class Triangle:
    """The kernel's operands for one minority pass (built once, read by every task)."""

    def __init__(self, A: np.ndarray, B: np.ndarray, A64: np.ndarray, B64: np.ndarray):
        d = A.shape[1] - 2  # A: rows [−2x, |x|², 1]; B: rows [x, 1, |x|²]
        self.A = _padded(np.ascontiguousarray(A[:, :d]))
        self.na = np.ascontiguousarray(A[:, d])
        self.BT = np.ascontiguousarray(_padded(np.ascontiguousarray(B[:, :d])).T)
        self.nb2 = np.ascontiguousarray(B[:, d + 1])
        self.A64, self.B64 = np.ascontiguousarray(A64), np.ascontiguousarray(B64)
        self.m = len(A)
        self.block_rows = BLOCK_ROWS

    def row_block(
        self, r0: int, r1: int, lo_s: float, hi_s: float, lo2: float, hi2: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """`passes._minority_row_block`'s results for rows r0:r1 (offsets from r0)."""
        rows = np.zeros(r1 - r0, dtype=np.int64)
        cols = np.zeros(self.m - r0, dtype=np.int64)
        t = self.A.dtype.type
        i, j, g = _triangle_kernel(
            self.A, self.na, self.BT, self.nb2, self.A64, self.B64, r0, r1,
            t(lo_s), t(hi_s), lo2, hi2, rows, cols,
        )  # fmt: skip
        return rows, cols, i, j, g
