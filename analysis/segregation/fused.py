"""The minority × majority pass as one compiled kernel (numba): per pair, the squared
distance as a sum of squared differences, the ε count and exp(−distance), all in registers
and L1 — where numpy needs one pass over a block per step (product, sqrt, exp, counts), each
reading and writing the block again (issue 35: 4.3 ns per pair that way).

Exactness, as in the numpy path (`passes.cross_pass`) but with a tighter band:

* the squared distance is Σ (a_k − b_k)² in coordinate order (no product of augmented
  vectors, so no cancellation); it and the canonical sum (`geometry.canonical_distances`:
  the same rounded differences, squares sorted ascending) both lie within γ_d = d·u/(1 − d·u)
  (relative) of the exact sum of the squared rounded differences, whether or not the
  compiler fuses multiply and add. A pair whose direct value lies within the relative band
  `_band_factor(d)`·ε² (four times the (2d + 4)·u that the comparison sqrt(c) ≤ ε can
  need) is decided by the canonical distance, computed here with the same operations in
  the same order as `canonical_distances`; the counts equal the direct formula's bit for
  bit. Where X lies on a grid (`_exact_sums`: coded items) both sums are exact, so the
  direct value is compared with the last square within ε and no pair needs the check;
* exp(−distance) uses the direct distance (relative error ≤ (d + 2)·u, at no distance
  amplified the way the product's absolute error is near 0) and a degree-13 Taylor
  polynomial after Cody–Waite reduction (within 1 ulp of libm on 2.2·10⁵ values); terms below
  e^−708 (distances over 708) are counted as e^−708 (< 4·10⁻³⁰⁸ each). A tile's terms are
  summed in vector lanes, rows' tiles with compensation, rows with `math.fsum`.

Compiled once per machine (`cache=True`: numba keeps the machine code next to this file,
or in its user cache where this folder is read-only).
"""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np

from .geometry import last_square_within as _last_square_within

try:  # numba is optional: without it the numpy (and torch) kernels serve
    import numba
    from llvmlite import ir
    from numba import njit, prange, types
    from numba.extending import intrinsic
except ImportError:  # pragma: no cover - numba is in the dependencies
    numba = None

AVAILABLE = numba is not None


def _prefer_wide_vectors() -> bool:
    """Let LLVM use 512-bit vectors on AVX-512 CPUs (it keeps to 256 bits there unless
    told otherwise: `prefer-256-bit`); these kernels run faster in 512-bit ones
    (docs/segregation.md). numba reads its CPU features once, when its CPU target starts,
    so this applies only if nothing has started it and the user set neither
    NUMBA_CPU_NAME nor NUMBA_CPU_FEATURES. The arithmetic is the same IEEE operations
    either way (only the lanes of the proximity sum's reassociation change)."""
    from numba.core import config
    from numba.core.codegen import get_host_cpu_features
    from numba.core.registry import cpu_target

    if config.CPU_FEATURES or config.CPU_NAME or "_toplevel_target_context" in vars(cpu_target):
        return False
    features = get_host_cpu_features()
    if "+avx512f" not in features.split(","):
        return False
    config.CPU_FEATURES = features + ",-prefer-256-bit"
    return True


WIDE = AVAILABLE and _prefer_wide_vectors()

_R = 4  # minority rows per register block
_W = 512  # majority columns per tile: 4 × 512 squared distances stay in L1
_CHUNK = 256  # rows per parallel task: a column tile read once serves 256 rows (measured:
# 64 rows cost 2.9–3.2 ns per pair at n = 150,000, 256 rows 2.2–2.4, 512 rows 2.1–2.3)
_U = np.finfo(np.float64).eps / 2
_LOCK = threading.Lock()  # numba's workqueue threading layer takes one caller at a time


def _band_factor(d: int) -> float:
    """Relative half-width of the band of direct squared distances around ε² that are
    decided by the canonical distance (see the module's docstring)."""
    return 8.0 * (d + 2) * _U


if AVAILABLE:
    _LOG2E = 1.4426950408889634
    _LN2HI = 6.93147180369123816490e-01  # fdlibm's split of ln 2: k·_LN2HI is exact
    _LN2LO = 1.90821492927058770002e-10

    @intrinsic
    def _f64_from_bits(typingctx, x):  # type: ignore[no-untyped-def]
        """The float64 whose bits are the int64 x (2^k from its exponent field)."""

        def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
            return builder.bitcast(args[0], ir.DoubleType())

        return types.float64(types.int64), codegen

    @intrinsic
    def _add_reassoc(typingctx, a, b):  # type: ignore[no-untyped-def]
        """a + b that the compiler may reassociate: lets a sum run in vector lanes, while
        every other operation keeps its order (no function-wide fast-math)."""

        def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
            return builder.fadd(args[0], args[1], flags=("reassoc",))

        return types.float64(types.float64, types.float64), codegen

    @njit(inline="always", fastmath={"contract"}, cache=True)
    def _exp_neg_sqrt(s: float) -> float:
        """exp(−√s) without a libm call, so that the loop around it vectorises."""
        x = max(-math.sqrt(s), -708.0)
        k = math.floor(x * _LOG2E + 0.5)
        kf = float(k)
        t = (x - kf * _LN2HI) - kf * _LN2LO  # |t| ≤ ln2/2 (+ rounding)
        p = 1.0 / 6227020800.0
        p = p * t + 1.0 / 479001600.0
        p = p * t + 1.0 / 39916800.0
        p = p * t + 1.0 / 3628800.0
        p = p * t + 1.0 / 362880.0
        p = p * t + 1.0 / 40320.0
        p = p * t + 1.0 / 5040.0
        p = p * t + 1.0 / 720.0
        p = p * t + 1.0 / 120.0
        p = p * t + 1.0 / 24.0
        p = p * t + 1.0 / 6.0
        p = p * t + 0.5
        p = p * t + 1.0
        p = p * t + 1.0
        return p * _f64_from_bits((k + 1023) << 52)

    @njit(cache=True)
    def _canonical_within(a: Any, b: Any, d: int, eps: float, tmp: Any) -> bool:
        """canonical_distances(a, b) ≤ ε: squared differences sorted ascending (insertion
        sort), summed left to right, sqrt — the operations of `geometry`, in its order."""
        for c in range(d):
            t = a[c] - b[c]
            v = t * t
            k = c
            while k > 0 and tmp[k - 1] > v:
                tmp[k] = tmp[k - 1]
                k -= 1
            tmp[k] = v
        acc = tmp[0]
        for c in range(1, d):
            acc += tmp[c]
        return math.sqrt(acc) <= eps

    @njit(parallel=True, fastmath={"contract"}, cache=True)
    def _cross_kernel(  # type: ignore[no-untyped-def]
        XA, XBT, XB, d, r0, r1, lo, hi, eps, want_counts, want_prox, counts, sums
    ):
        """Rows r0:r1 of XA (minority, zero-padded to a multiple of 4 columns) against every
        column of XBT (majority, transposed, padded alike; XB its rows): per row the
        partners within ε (counts) and Σ exp(−distance) (sums)."""
        m = XA.shape[0]
        dp = XA.shape[1]
        nb = XBT.shape[1]
        n_chunks = (r1 - r0 + _CHUNK - 1) // _CHUNK
        for q in prange(n_chunks):
            q0 = r0 + q * _CHUNK
            q1 = min(q0 + _CHUNK, r1)
            S = np.empty((_R, _W))
            tmp = np.empty(max(d, 1))
            cnt = np.zeros(q1 - q0, np.int64)
            tot = np.zeros(q1 - q0)
            comp = np.zeros(q1 - q0)  # Neumaier compensation of the tile sums
            for c0 in range(0, nb, _W):
                w = min(_W, nb - c0)
                for g0 in range(q0, q1, _R):
                    ia, ib = g0, min(g0 + 1, m - 1)
                    ic, id_ = min(g0 + 2, m - 1), min(g0 + 3, m - 1)
                    S0, S1, S2, S3 = S[0], S[1], S[2], S[3]
                    A0, A1, A2, A3 = XA[ia], XA[ib], XA[ic], XA[id_]
                    S[:, :w] = 0.0
                    for k in range(0, dp, 4):  # four coordinates per sweep over the tile
                        a00, a01, a02, a03 = A0[k], A0[k + 1], A0[k + 2], A0[k + 3]
                        a10, a11, a12, a13 = A1[k], A1[k + 1], A1[k + 2], A1[k + 3]
                        a20, a21, a22, a23 = A2[k], A2[k + 1], A2[k + 2], A2[k + 3]
                        a30, a31, a32, a33 = A3[k], A3[k + 1], A3[k + 2], A3[k + 3]
                        B0, B1 = XBT[k, c0 : c0 + w], XBT[k + 1, c0 : c0 + w]
                        B2, B3 = XBT[k + 2, c0 : c0 + w], XBT[k + 3, c0 : c0 + w]
                        for j in range(w):  # vectorised over j; coordinates in order
                            b0, b1, b2, b3 = B0[j], B1[j], B2[j], B3[j]
                            s = S0[j]
                            t = a00 - b0
                            s += t * t
                            t = a01 - b1
                            s += t * t
                            t = a02 - b2
                            s += t * t
                            t = a03 - b3
                            s += t * t
                            S0[j] = s
                            s = S1[j]
                            t = a10 - b0
                            s += t * t
                            t = a11 - b1
                            s += t * t
                            t = a12 - b2
                            s += t * t
                            t = a13 - b3
                            s += t * t
                            S1[j] = s
                            s = S2[j]
                            t = a20 - b0
                            s += t * t
                            t = a21 - b1
                            s += t * t
                            t = a22 - b2
                            s += t * t
                            t = a23 - b3
                            s += t * t
                            S2[j] = s
                            s = S3[j]
                            t = a30 - b0
                            s += t * t
                            t = a31 - b1
                            s += t * t
                            t = a32 - b2
                            s += t * t
                            t = a33 - b3
                            s += t * t
                            S3[j] = s
                    for r in range(min(_R, q1 - g0)):
                        Sr = S[r]
                        i = g0 + r
                        if want_counts:
                            n = 0
                            n_band = 0
                            for j in range(w):
                                n += Sr[j] < lo
                                n_band += Sr[j] <= hi
                            if n_band > n:  # pairs near ε: the canonical distance decides
                                for j in range(w):
                                    v = Sr[j]
                                    if lo <= v <= hi and _canonical_within(
                                        XA[i], XB[c0 + j], d, eps, tmp
                                    ):
                                        n += 1
                            cnt[i - q0] += n
                        if want_prox:
                            p = 0.0
                            for j in range(w):
                                p = _add_reassoc(p, _exp_neg_sqrt(Sr[j]))
                            a = tot[i - q0]
                            b = a + p
                            if abs(a) >= abs(p):
                                comp[i - q0] += (a - b) + p
                            else:
                                comp[i - q0] += (p - b) + a
                            tot[i - q0] = b
            for i in range(q0, q1):
                counts[i] = cnt[i - q0]
                sums[i] = tot[i - q0] + comp[i - q0]


def _padded(X: np.ndarray) -> np.ndarray:
    """X with zero columns up to a multiple of 4 (they add +0.0 exactly to every sum)."""
    n, d = X.shape
    out = np.zeros((n, max(4, -(-d // 4) * 4)))
    out[:, :d] = X
    return out


def _exact_sums(X: np.ndarray) -> bool:
    """Whether every sum of squared differences of X's rows is exact in any order: all
    values multiples of 2⁻ᵖ (coded items: quarters, halves) and Σ_k (range_k·2ᵖ)² < 2⁵³,
    so that each difference, square and partial sum is an integer times 2⁻²ᵖ below 2⁵³.
    Then the direct sum is the canonical one and no pair needs the canonical check."""
    if not np.all(np.isfinite(X)) or not np.array_equal(X * 2.0**30, np.round(X * 2.0**30)):
        return False
    p = next(p for p in range(31) if np.array_equal(X * 2.0**p, np.round(X * 2.0**p)))
    spans = (X.max(axis=0) - X.min(axis=0)) * 2.0**p if len(X) else np.zeros(1)
    return float(np.sum(spans * spans)) < 2.0**53


def cross_counts_and_sums(
    X: np.ndarray,
    rows_idx: np.ndarray,
    cols_idx: np.ndarray,
    eps: float | None,
    proximity: bool,
    n_jobs: int,
    progress: Any = None,
    stage: str = "minority x majority",
) -> tuple[np.ndarray | None, float]:
    """`passes.cross_pass`'s results from the compiled kernel: per minority row the
    majority members within ε (None without eps), and Σ exp(−distance) over all pairs."""
    X = np.asarray(X, dtype=np.float64)
    d = X.shape[1]
    XA = _padded(X[rows_idx])
    XBp = _padded(X[cols_idx])
    XBT = np.ascontiguousarray(XBp.T)
    m = len(rows_idx)
    counts = np.zeros(m, dtype=np.int64)
    sums = np.zeros(m)
    if eps is None:
        lo = hi = -1.0
    elif _exact_sums(X):  # direct = canonical: s ≤ the last square whose sqrt is ≤ ε
        lo, hi = float(np.nextafter(_last_square_within(eps), math.inf)), -1.0
    else:
        e2, f = eps * eps, _band_factor(d)
        lo, hi = e2 * (1.0 - f) - 1e-300, e2 * (1.0 + f) + 1e-300
    parts = max(1, min(10, m // (32 * _CHUNK)))  # calls (progress), each of ≥ 32 tasks
    edges = [round(m * k / parts) for k in range(parts + 1)]
    with _LOCK:
        before = numba.get_num_threads()
        numba.set_num_threads(max(1, min(n_jobs, numba.config.NUMBA_NUM_THREADS)))
        try:
            for k in range(parts):
                _cross_kernel(
                    XA, XBT, XBp, d, edges[k], edges[k + 1], lo, hi,
                    -1.0 if eps is None else float(eps), eps is not None, proximity,
                    counts, sums,
                )  # fmt: skip
                if progress is not None:
                    progress(stage, k + 1, parts)
        finally:
            numba.set_num_threads(before)
    return (counts if eps is not None else None), (math.fsum(sums) if proximity else 0.0)
