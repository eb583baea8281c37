"""ε for centralization: an exact order statistic of the minority's pairwise distances,
found without sorting all of them, so that it stays exact and memory-bounded at any n.

Small minorities: every distinct pair's canonical distance, then a partition. Large
ones: a random sample of pairs brackets the rank, one blocked pass (`passes`) counts the
pairs surely below the bracket and resolves those inside it. The pass is returned with ε
because it also yields the centralization counts.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np

from .backends import make_ops, row_block_tasks, triangle_mask
from .geometry import EXACT_CHUNK, Geometry, canonical_distances, make_geometry
from .inputs import SegregationInputError, as_population
from .passes import (
    Bracket,
    Classes,
    TooManyClasses,
    _max_classes,
    class_order_stats,
    minority_bracket_pass,
    minority_class_pass,
)

EpsPairs = Literal["distinct", "ordered_with_self"]
EPS_PAIRS: tuple[str, ...] = ("distinct", "ordered_with_self")
_FULL_PAIRS = 200_000  # up to this many minority pairs, ε comes from all pairs directly
_SAMPLE_PAIRS = 1_000_000  # pairs sampled to bracket the ε order statistic
_CANDIDATE_BUDGET = 20_000_000  # above this many expected bracket pairs, narrow it first
_MAX_CLASSES_ON = True  # try the value-counting bracket pass first (see passes.Classes)


def _lerp_like_numpy(a: float, b: float, t: float) -> float:
    """numpy's own linear interpolation between two order statistics (bitwise the same)."""
    return float(np.quantile(np.array([a, b]), t))


def _all_distinct_distances(X: np.ndarray) -> np.ndarray:
    m = len(X)
    out = []
    step = max(1, 200_000 // max(m, 1))
    for r0 in range(0, m, step):
        rows = np.arange(r0, min(r0 + step, m))
        i, j = np.nonzero(np.arange(m)[None, :] > rows[:, None])
        out.append(canonical_distances(X, rows[i], j))
    return np.concatenate(out) if out else np.empty(0)


def _refine_bracket(
    ops: Any,
    geo: Geometry,
    idx: np.ndarray,
    lo2: float,
    hi2: float,
    ranks: list[int],
    bins: int,
) -> tuple[float, float]:
    """Narrow [lo2, hi2] with a histogram pass (nothing stored) so that the pass that
    keeps candidates stays within memory when there are very many pairs."""
    A, B = ops.put(geo.A[idx]), ops.put(geo.B[idx])
    m, br, bc = len(idx), ops.block_rows, ops.block_cols
    tol2 = 2 * geo.tol
    # open ends: block values lie in [-tol, (2R)² + tol], R = the largest |x - mean|
    base_lo = lo2 if math.isfinite(lo2) else -tol2
    base_hi = hi2 if math.isfinite(hi2) else 4 * float(np.max(geo.A[idx, -2])) + tol2
    width = (base_hi - base_lo) / bins

    def task(r0: int) -> tuple[int, np.ndarray]:
        below, hist = 0, np.zeros(bins, dtype=np.int64)
        r1 = min(r0 + br, m)
        for c0 in range(r0, m, bc):
            s = ops.gemm(A[r0:r1], B[c0 : c0 + bc])
            triangle_mask(ops, s, r0, c0)
            lt = s < base_lo
            below += int(ops.count(lt))
            v = ops.host(s[(s <= base_hi) & ~lt])
            k = np.minimum(((v - base_lo) / width).astype(np.int64), bins - 1)
            hist += np.bincount(k, minlength=bins)
        return below, hist

    below, hist = 0, np.zeros(bins, dtype=np.int64)
    for b, h in ops.run(row_block_tasks(task, m, br), "ε histogram"):
        below += b
        hist += h
    cum = below + np.cumsum(hist)
    first = int(np.searchsorted(cum, min(ranks), side="right"))
    last = int(np.searchsorted(cum, max(ranks), side="right"))
    if first >= bins or last >= bins:
        return lo2, hi2
    new_lo = base_lo + first * width - tol2 if first > 0 else lo2
    new_hi = base_lo + (last + 1) * width + tol2 if last < bins - 1 else hi2
    return new_lo, new_hi


def _distinct_order_stats(
    ops: Any, geo: Geometry, idx: np.ndarray, ranks: list[int], seed: int
) -> tuple[dict[int, float], Bracket | Classes | None]:
    """Exact values of the given 0-based ranks among distinct-pair distances of idx.

    Large populations: a random sample of pairs brackets the ranks; one blocked pass
    counts the pairs surely below the bracket and resolves the ones inside it. First
    the class pass (`Classes`): the canonical distances of the bracket's pairs,
    counted per member and value — exact, and small when the data are coded and full
    of ties. When the bracket holds too many distinct values (continuous data) the
    pair pass keeps the block values instead: the rank's block value γ is within `tol`
    of the true one, so only the pairs with block values within 2·tol of γ can hold
    it; their canonical distances decide. Either pass is returned: it also yields the
    centralization counts.
    """
    m = len(idx)
    n_pairs = m * (m - 1) // 2
    ranks = sorted(set(ranks))
    if n_pairs <= _FULL_PAIRS:
        d = _all_distinct_distances(geo.X[idx])
        part = np.partition(d, sorted(set(ranks)))
        return {r: float(part[r]) for r in ranks}, None
    rng = np.random.default_rng(seed)
    i = rng.integers(0, m, size=int(_SAMPLE_PAIRS * 1.01) + 16)
    j = rng.integers(0, m, size=len(i))
    keep = i != j
    i, j = idx[i[keep][:_SAMPLE_PAIRS]], idx[j[keep][:_SAMPLE_PAIRS]]
    parts = [
        ((geo.X[i[c : c + EXACT_CHUNK]] - geo.X[j[c : c + EXACT_CHUNK]]) ** 2).sum(axis=1)
        for c in range(0, len(i), EXACT_CHUNK)
    ]
    drawn = np.concatenate(parts)
    sample = np.sort(drawn)  # a guide only
    s, tol2 = len(sample), 2 * geo.tol
    p_lo, p_hi = min(ranks) / (n_pairs - 1), max(ranks) / (n_pairs - 1)
    classes = _MAX_CLASSES_ON
    for z in (8.0, 32.0, math.inf):
        lo_p = p_lo - z * (math.sqrt(p_lo * (1 - p_lo) / s) + 1.0 / s)
        hi_p = p_hi + z * (math.sqrt(p_hi * (1 - p_hi) / s) + 1.0 / s)
        # 4·tol beyond the sampled values: a tie at the rank stays inside the bracket
        lo2 = float(sample[int(lo_p * (s - 1))]) - 2 * tol2 if lo_p > 0 else -math.inf
        hi2 = float(sample[int(math.ceil(hi_p * (s - 1)))]) + 2 * tol2 if hi_p < 1 else math.inf
        if classes and _too_many_values(geo, i, j, drawn, lo2, hi2, _max_classes(m)):
            classes = False  # the sample alone holds too many: the class pass would stop
        if classes:
            try:
                cls = minority_class_pass(ops, geo, idx, lo2, hi2)
            except TooManyClasses:
                classes = False  # continuous data: keep pairs instead
            else:
                found = class_order_stats(cls, ranks, geo.tol)
                if found is not None:
                    return found, cls
                continue
        expected = (min(hi_p, 1.0) - max(lo_p, 0.0)) * n_pairs
        if expected > _CANDIDATE_BUDGET:
            bins = int(min(1 << 20, 8 * expected / _CANDIDATE_BUDGET))
            lo2, hi2 = _refine_bracket(ops, geo, idx, lo2, hi2, ranks, bins)
        br = minority_bracket_pass(ops, geo, idx, lo2, hi2)
        below, g = int(br.below.sum()) // 2, br.g
        out: dict[int, float] = {}
        for r in ranks:
            k = r - below
            if not 0 <= k < len(g):
                break
            gamma = float(np.partition(g, k)[k])
            if not (gamma - tol2 > lo2 and gamma + tol2 < hi2):
                break
            n_lower = int(np.count_nonzero(g < gamma - tol2))
            band = np.flatnonzero(np.abs(g - gamma) <= tol2)
            e = np.sort(canonical_distances(geo.X, idx[br.ci[band]], idx[br.cj[band]]))
            out[r] = float(e[k - n_lower])
        if len(out) == len(ranks):
            return out, br
    raise RuntimeError("ε order statistic not found in the full range; this is a bug")


def _too_many_values(
    geo: Geometry,
    i: np.ndarray,
    j: np.ndarray,
    drawn: np.ndarray,
    lo2: float,
    hi2: float,
    limit: int,
) -> bool:
    """Whether the sampled pairs inside the bracket already have more distinct canonical
    distances than the class pass may count (a lower bound on the bracket's own), so that
    continuous data go straight to the pair-keeping pass instead of visiting the minority
    pairs twice. Sampled values are naive sums: 4·tol of slack keeps every pair whose
    block value may fall in the bracket."""
    slack = 4 * geo.tol
    sel = np.flatnonzero((drawn >= lo2 - slack) & (drawn <= hi2 + slack))
    if len(sel) <= limit:
        return False
    c = canonical_distances(geo.X, i[sel], j[sel]) ** 2
    inside = (c >= lo2 + 2 * geo.tol) & (c <= hi2 - 2 * geo.tol)  # surely in the bracket
    return len(np.unique(c[inside])) > limit


def threshold(eps: float, comparison: str) -> float | None:
    """The `<=` threshold equivalent to "within ε" under `comparison` (`<=` or `<`; None:
    nobody, not even oneself, is within ε)."""
    if comparison == "<=":
        return float(eps)
    below = float(np.nextafter(eps, -math.inf))
    return below if below >= 0 else None


def minority_eps(
    X: Any,
    is_minority: np.ndarray,
    q: float = 0.2,
    eps_pairs: EpsPairs = "distinct",
    *,
    backend: str = "numpy",
    device: str | None = None,
    n_jobs: int | None = None,
    seed: int = 0,
) -> float:
    """ε for centralization: the exact q-quantile of minority pairwise distances."""
    Xa = as_population(X)
    is_min = np.asarray(is_minority, dtype=bool)
    if len(is_min) != len(Xa):
        raise SegregationInputError(f"{len(Xa)} profiles but {len(is_min)} group flags")
    ops = make_ops(backend, device, n_jobs)
    return find_eps(ops, make_geometry(Xa), np.flatnonzero(is_min), q, eps_pairs, seed)[0]


def find_eps(
    ops: Any, geo: Geometry, idx: np.ndarray, q: float, eps_pairs: str, seed: int
) -> tuple[float, Bracket | Classes | None]:
    if not 0.0 <= q <= 1.0:
        raise SegregationInputError(f"eps quantile must be in [0, 1], got {q}")
    if eps_pairs not in EPS_PAIRS:
        raise SegregationInputError(f"eps_pairs must be one of {', '.join(EPS_PAIRS)}")
    m = len(idx)
    if m < 2:
        raise SegregationInputError("at least 2 minority members are needed for ε")
    total = m * (m - 1) // 2 if eps_pairs == "distinct" else m * m
    h = (total - 1) * q
    k = int(math.floor(h))
    t = h - math.floor(h)
    needed = [k, min(k + 1, total - 1)]
    if eps_pairs == "distinct":
        vals, br = _distinct_order_stats(ops, geo, idx, needed, seed)
        a, b = vals[needed[0]], vals[needed[1]]
    else:
        # m self-distances (0) come first, then each distinct pair twice
        dranks = sorted({(r - m) // 2 for r in needed if r >= m})
        vals, br = _distinct_order_stats(ops, geo, idx, dranks, seed) if dranks else ({}, None)
        a, b = (0.0 if r < m else vals[(r - m) // 2] for r in needed)
    return _lerp_like_numpy(a, b, t), br
