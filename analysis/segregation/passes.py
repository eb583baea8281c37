"""The blocked passes over pairs that every index is built from, kept apart from the
order statistic and the public functions so that each pass's exactness argument (block
value, `tol` band, canonical distance) can be read in one place.

Minority passes walk the upper triangle of minority × minority; the cross pass walks
minority × majority. Each works row block by row block (`backends.row_block_tasks`), so
memory does not grow with n².
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import device_passes
from .backends import row_block_tasks, triangle_mask
from .geometry import Geometry, canonical_distances
from .screen import Operands, above_f32, below_f32, double_operands, operands, row_dots

_SMALL_SQ = 1e-2  # below this squared distance, proximity uses the canonical distance
_CLASS_CHUNK = 1 << 22  # counters per bincount in the class pass (32 MB of int64)
_NO_INDEX, _NO_VALUE = np.empty(0, np.int64), np.empty(0)


@dataclass
class Bracket:
    below: np.ndarray  # per minority member: partners with block value < lo2
    lo2: float
    hi2: float
    g: np.ndarray  # block values of the pairs in [lo2, hi2] ...
    ci: np.ndarray  # ... and their (local) indices, ci < cj
    cj: np.ndarray


def _scan(
    ops: Any,
    op: Operands,
    r0: int,
    r1: int,
    c0: int,
    lo2: float,
    hi2: float,
    triangle: bool,
    columns: bool = True,
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, np.ndarray, np.ndarray]:
    """One block, rows r0:r1 × columns c0:c0+block_cols (the upper triangle only where
    `triangle`): per row (and per column, where `columns`) how many partners have a block
    value below lo2, and the pairs with block values in [lo2, hi2] as offsets from (r0, c0)
    with their float64 block values. In float32 where the operands are (`screen`)."""
    c1 = c0 + op.block_cols
    if op.single:
        s = ops.gemm32(op.A32[r0:r1], op.B32[c0:c1])
        lo, hi = below_f32(lo2 - op.margin), above_f32(hi2 + op.margin)
    else:
        s = ops.gemm(op.A[r0:r1], op.B[c0:c1])
        lo, hi = lo2, hi2
    if triangle:
        triangle_mask(ops, s, r0, c0)
    lt = s < lo
    rows = ops.host(ops.count(lt, axis=1)).astype(np.int64)
    cols = ops.host(ops.count(lt, axis=0)).astype(np.int64) if columns else None
    i, j = _band(ops, s, lt, rows, hi)
    if not len(i):
        return rows, cols, _NO_INDEX, _NO_INDEX, _NO_VALUE
    if not op.single:
        return rows, cols, i, j, ops.host(s[ops.index(i), ops.index(j)])
    g = row_dots(op.A64, op.B64, i + r0, j + c0)  # the recheck: float64 block values
    below = g < lo2
    rows += np.bincount(i[below], minlength=len(rows))
    if cols is not None:
        cols += np.bincount(j[below], minlength=len(cols))
    keep = ~below & (g <= hi2)
    return rows, cols, i[keep], j[keep], g[keep]


def _band(ops: Any, s: Any, lt: Any, rows: np.ndarray, hi: Any) -> tuple[np.ndarray, np.ndarray]:
    """Offsets of the block's values in [lo, hi] (lt: the values below lo, rows: its row
    counts), looked for only in the rows that hold any: a shell around a threshold touches
    few rows of a block, and a full-block search cost more than the count."""
    le = s <= hi
    hit = np.flatnonzero(ops.host(ops.count(le, axis=1)) != rows)
    if not len(hit):
        return _NO_INDEX, _NO_INDEX
    k = ops.index(hit)
    i, j = ops.nonzero(le[k] & ~lt[k])
    return hit[i], j


def _minority_operands(
    ops: Any, geo: Geometry, idx: np.ndarray, lo2: float, hi2: float
) -> Operands:
    op = operands(ops, geo, idx, idx, [lo2, hi2])
    kernel = getattr(ops, "fused_triangle", None)
    if kernel is not None:
        op.kernel = kernel(op, len(idx))
        if op.kernel is not None:
            op.block_rows = op.kernel.block_rows
            return op
    if not op.single:
        ops.prepare(len(idx) * (len(idx) - 1) // 2)
    return op


def _minority_row_block(
    ops: Any, op: Operands, r0: int, m: int, lo2: float, hi2: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One row block of the distinct minority pairs (upper triangle), the scan every
    minority pass shares: per row and per column (offset from r0) how many partners have
    a block value below lo2, and the pairs with block values in [lo2, hi2] as row and
    column offsets from r0, with their block values."""
    r1 = min(r0 + op.block_rows, m)
    if op.kernel is not None:
        if op.single:
            lo, hi = float(below_f32(lo2 - op.margin)), float(above_f32(hi2 + op.margin))
        else:
            lo, hi = lo2, hi2
        return op.kernel.row_block(r0, r1, lo, hi, lo2, hi2)
    rows = np.zeros(r1 - r0, dtype=np.int64)
    cols = np.zeros(m - r0, dtype=np.int64)
    ii, jj, vals = [_NO_INDEX], [_NO_INDEX], [_NO_VALUE]
    for c0 in range(r0, m, op.block_cols):
        rc, cc, i, j, v = _scan(ops, op, r0, r1, c0, lo2, hi2, triangle=True)
        rows += rc
        assert cc is not None
        cols[c0 - r0 : c0 - r0 + len(cc)] += cc
        if len(i):
            ii.append(i.astype(np.int64))
            jj.append(j + (c0 - r0))
            vals.append(v)
    return rows, cols, np.concatenate(ii), np.concatenate(jj), np.concatenate(vals)


def _add_row_block(total: np.ndarray, r0: int, rows: np.ndarray, cols: np.ndarray) -> None:
    """Add one row block's per-row counts (members r0, r0+1, …) and per-column counts
    (columns offset from r0: the block's partners in the upper triangle) to the totals."""
    total[r0 : r0 + len(rows)] += rows
    total[r0:] += cols


def minority_bracket_pass(
    ops: Any, geo: Geometry, idx: np.ndarray, lo2: float, hi2: float
) -> Bracket:
    """Distinct minority pairs: per member, how many partners have a block value below
    lo2; and the block values and (local) indices of the pairs with values in [lo2, hi2]."""
    op = _minority_operands(ops, geo, idx, lo2, hi2)
    m = len(idx)

    def task(r0: int) -> tuple[Any, ...]:
        rows, cols, i, j, v = _minority_row_block(ops, op, r0, m, lo2, hi2)
        return (
            r0,
            rows,
            cols,
            v,
            (i + r0).astype(np.int32, copy=False),
            (j + r0).astype(np.int32, copy=False),
        )

    below = np.zeros(m, dtype=np.int64)
    vals, ii, jj = [np.empty(0)], [np.empty(0, np.int32)], [np.empty(0, np.int32)]
    tasks = row_block_tasks(task, m, op.block_rows)
    for r0, rows, cols, v, i, j in ops.run(tasks, "minority pairs (ε)"):
        _add_row_block(below, r0, rows, cols)
        vals.append(v)
        ii.append(i)
        jj.append(j)
    return Bracket(below, lo2, hi2, np.concatenate(vals), np.concatenate(ii), np.concatenate(jj))


def counts_from_bracket(
    geo: Geometry, idx: np.ndarray, br: Bracket | Classes, eps: float
) -> np.ndarray | None:
    """Per minority member, other minority members within ε — from the bracket pass alone,
    when ε² ± tol lies inside the bracket (else None: a counting pass is needed)."""
    if isinstance(br, Classes):
        e2 = eps * eps
        if not (br.lo2 + 2 * geo.tol < e2 < br.hi2 - 2 * geo.tol):
            return None
        within = br.counts[br.values <= eps].sum(axis=0, dtype=np.int64)
        return br.below + within
    lo2, hi2 = geo.band(eps)
    if not (br.lo2 < lo2 and hi2 < br.hi2):
        return None
    counts = br.below.copy()
    inside = br.g < lo2
    band = np.flatnonzero(~inside & (br.g <= hi2))
    if len(band):
        ok = canonical_distances(geo.X, idx[br.ci[band]], idx[br.cj[band]]) <= eps
        inside[band[ok]] = True
    counts += np.bincount(br.ci[inside], minlength=len(counts))
    counts += np.bincount(br.cj[inside], minlength=len(counts))
    return counts


@dataclass
class Classes:
    """A bracket pass that kept distance *values* instead of pairs (tie-heavy data).

    `values` are the distinct canonical distances of the pairs with block values in
    [lo2, hi2], sorted; `counts[v, i]` how many partners of member i lie at values[v].
    Coded profiles put millions of pairs on a handful of distances: storing the pairs
    (16 bytes each) would take gigabytes, the values take len(values) × m integers.
    """

    below: np.ndarray
    lo2: float
    hi2: float
    values: np.ndarray
    counts: np.ndarray  # (len(values), m) int32

    def pair_counts(self) -> np.ndarray:
        return self.counts.sum(axis=1, dtype=np.int64) // 2


class TooManyClasses(Exception):
    """The bracket holds more distinct distances than the class pass may keep."""


def _max_classes(m: int) -> int:
    """At most 256 classes, and at most 64·10⁶ counters (256 MB of int32) in all."""
    return int(max(1, min(256, 64_000_000 // max(m, 1))))


def minority_class_pass(
    ops: Any, geo: Geometry, idx: np.ndarray, lo2: float, hi2: float
) -> Classes:
    """Distinct minority pairs: per member, partners below lo2, and, for the pairs with
    block values in [lo2, hi2], their canonical distances counted per member and value.
    Raises TooManyClasses (after stopping the other tasks) when the values are too many
    to count this way — continuous data, where the pair-keeping pass is the right one."""
    op = _minority_operands(ops, geo, idx, lo2, hi2)
    m = len(idx)
    limit = _max_classes(m)
    stop = threading.Event()

    Xd = ops.put(geo.X[idx]) if getattr(ops, "on_device", False) else None

    def task(r0: int) -> tuple[Any, ...] | None:
        if stop.is_set():
            return None
        if Xd is not None:  # the torch backend: the recheck stays on its device
            out = device_passes.class_block(ops, op, Xd, r0, m, lo2, hi2, limit)
            if out is None:
                stop.set()
            return out
        rows, cols, i, j, _ = _minority_row_block(ops, op, r0, m, lo2, hi2)
        if not len(i):
            return r0, rows, cols, np.empty(0), np.empty((0, m - r0), np.int32)
        vals = canonical_distances(geo.X, idx[i + r0], idx[j + r0])
        uniq, inv = np.unique(vals, return_inverse=True)
        if len(uniq) > limit:
            stop.set()
            return None
        w = m - r0
        cnt = np.empty((len(uniq), w), dtype=np.int32)
        step = max(1, _CLASS_CHUNK // w)  # values per bincount: bounded temporaries
        for v0 in range(0, len(uniq), step):
            v1 = min(v0 + step, len(uniq))
            sel = (inv >= v0) & (inv < v1)
            key_i = (inv[sel] - v0) * w + i[sel]
            key_j = (inv[sel] - v0) * w + j[sel]
            flat = np.bincount(key_i, minlength=(v1 - v0) * w)
            flat += np.bincount(key_j, minlength=(v1 - v0) * w)
            cnt[v0:v1] = flat.reshape(v1 - v0, w)
        return r0, rows, cols, uniq, cnt

    below = np.zeros(m, dtype=np.int64)
    per_value: dict[float, np.ndarray] = {}
    tasks = row_block_tasks(task, m, op.block_rows)
    for out in ops.run(tasks, "minority pairs (ε)"):
        if out is None or stop.is_set():
            stop.set()
            continue
        r0, rows, cols, uniq, cnt = out
        _add_row_block(below, r0, rows, cols)
        for v, c in zip(uniq.tolist(), cnt, strict=True):
            acc = per_value.get(v)
            if acc is None:
                if len(per_value) >= limit:
                    stop.set()
                    break
                acc = per_value[v] = np.zeros(m, dtype=np.int32)
            acc[r0:] += c
    if stop.is_set():
        raise TooManyClasses
    values = np.array(sorted(per_value), dtype=np.float64)
    counts = (
        np.stack([per_value[v] for v in values.tolist()])
        if len(values)
        else np.zeros((0, m), dtype=np.int32)
    )
    return Classes(below, lo2, hi2, values, counts)


def class_order_stats(cls: Classes, ranks: list[int], tol: float) -> dict[int, float] | None:
    """Exact rank values from a class pass, or None when a rank falls outside the bracket.

    Pairs below the bracket have canonical c² < lo2 + tol, pairs above c² > hi2 − tol; a
    value v with lo2 + 2·tol < v² < hi2 − 2·tol is therefore above every pair below and
    under every pair above, so its rank among all pairs is known from the counts."""
    below = int(cls.below.sum()) // 2
    cum = below + np.cumsum(cls.pair_counts())
    out: dict[int, float] = {}
    for r in ranks:
        if r < below or not len(cum):
            return None
        pos = int(np.searchsorted(cum, r, side="right"))
        if pos >= len(cls.values):
            return None
        v = float(cls.values[pos])
        if not (cls.lo2 + 2 * tol < v * v < cls.hi2 - 2 * tol):
            return None
        out[r] = v
    return out


def minority_within_counts(ops: Any, geo: Geometry, idx: np.ndarray, eps: float) -> np.ndarray:
    """For each minority member, how many *other* minority members lie within ε."""
    lo2, hi2 = geo.band(eps)
    op = _minority_operands(ops, geo, idx, lo2, hi2)
    m = len(idx)

    Xd = ops.put(geo.X[idx]) if getattr(ops, "on_device", False) else None

    def task(r0: int) -> tuple[int, np.ndarray, np.ndarray]:
        if Xd is not None:  # the torch backend: the recheck stays on its device
            return device_passes.within_block(ops, op, Xd, r0, m, eps, lo2, hi2)
        rows, cols, i, j, _ = _minority_row_block(ops, op, r0, m, lo2, hi2)
        if len(i):
            ok = canonical_distances(geo.X, idx[i + r0], idx[j + r0]) <= eps
            rows += np.bincount(i[ok], minlength=len(rows))
            cols += np.bincount(j[ok], minlength=len(cols))
        return r0, rows, cols

    counts = np.zeros(m, dtype=np.int64)
    for r0, rows, cols in ops.run(row_block_tasks(task, m, op.block_rows), "minority pairs"):
        _add_row_block(counts, r0, rows, cols)
    return counts


def cross_pass(
    ops: Any,
    geo: Geometry,
    rows_idx: np.ndarray,
    cols_idx: np.ndarray,
    eps: float | None,
    proximity: bool,
) -> tuple[np.ndarray | None, float]:
    """Minority rows × majority columns, each pair once: per-row counts within ε (if eps is
    given) and the sum of exp(−distance) over all pairs (if proximity).

    Proximity needs every pair's float64 block value, and the counts then come from the
    same block; counts alone are screened in float32 (`screen`). Where the backend has a
    compiled kernel for the whole pass (`backends.NumbaOps`), it does the pass instead."""
    fused = getattr(ops, "fused_cross", None)
    if fused is not None:
        out = fused(geo.X, rows_idx, cols_idx, eps, proximity)
        if out is not None:
            return out
    m, big = len(rows_idx), len(cols_idx)
    lo2 = hi2 = 0.0
    if eps is not None:
        lo2, hi2 = geo.band(eps)
    if proximity:
        op = double_operands(ops, geo, rows_idx, cols_idx)
    else:
        op = operands(ops, geo, rows_idx, cols_idx, [lo2, hi2])
    if not op.single:
        ops.prepare(m * big)
    br, bc = op.block_rows, op.block_cols

    def counts(r0: int, c0: int, rows: np.ndarray, i: np.ndarray, j: np.ndarray) -> None:
        """Add the band pairs (offsets i, j from r0, c0) whose canonical distance is ≤ ε."""
        if len(i):
            ok = canonical_distances(geo.X, rows_idx[i + r0], cols_idx[j + c0]) <= eps
            rows += np.bincount(i[ok], minlength=len(rows))

    if getattr(ops, "on_device", False):  # the torch backend: the recheck stays on its device
        XA, XB = ops.put(geo.X[rows_idx]), ops.put(geo.X[cols_idx])

        def on_device(r0: int) -> tuple[int, np.ndarray | None, list[float]]:
            return device_passes.cross_block(
                ops, op, XA, XB, r0, m, big, eps, (lo2, hi2), proximity, _SMALL_SQ
            )

        return _cross_totals(ops, on_device, m, br, eps)

    def task(r0: int) -> tuple[int, np.ndarray | None, list[float]]:
        r1 = min(r0 + br, m)
        rows = np.zeros(r1 - r0, dtype=np.int64) if eps is not None else None
        sums: list[float] = []
        for c0 in range(0, big, bc):
            if not proximity:
                assert rows is not None
                rc, _, i, j, _ = _scan(ops, op, r0, r1, c0, lo2, hi2, False, columns=False)
                rows += rc
                counts(r0, c0, rows, i, j)
                continue
            s = ops.gemm(op.A[r0:r1], op.B[c0 : c0 + bc])
            low = ops.minimum(s)
            if rows is not None and low <= hi2:  # a block wholly beyond ε adds no counts
                lt = s < lo2
                rc = ops.host(ops.count(lt, axis=1))
                rows += rc
                counts(r0, c0, rows, *_band(ops, s, lt, rc, hi2))
            if low < _SMALL_SQ:
                i, j = ops.nonzero(s < _SMALL_SQ)
                d = canonical_distances(geo.X, rows_idx[i + r0], cols_idx[j + c0])
                sums.append(float(np.exp(-d).sum()))
                ops.set_at(s, i, j, math.inf)
            sums.append(ops.exp_neg_sqrt_sum(s))
        return r0, rows, sums

    return _cross_totals(ops, task, m, br, eps)


def _cross_totals(
    ops: Any, task: Any, m: int, br: int, eps: float | None
) -> tuple[np.ndarray | None, float]:
    """Run the cross pass's row blocks: per-row counts and the fsum of the block sums."""
    total = np.zeros(m, dtype=np.int64) if eps is not None else None
    parts: list[float] = []
    for r0, rows, sums in ops.run(row_block_tasks(task, m, br), "minority x majority"):
        if total is not None and rows is not None:
            total[r0 : r0 + len(rows)] += rows
        parts.extend(sums)
    return total, math.fsum(parts)
