"""The row blocks of the pair passes with the torch backend, kept on its device: the
canonical distances of the pairs near a threshold, their counts and the distance classes
of ε's value pass are computed there, and a row block's results come back to the host
once. On tie-heavy (coded) data those pairs number tens of millions; done on the host (one
thread, `canonical_distances`, after copying every pair's indices back) they made a GPU
run slower than the CPU's.

Exactness is that of `passes`: the same block values, thresholds and rules. The device
forms the canonical *squared* sum with the operations of `geometry.canonical_distances` in
its order (rounded differences, squares, an ascending sort, a left-to-right sum: each a
separate elementwise IEEE operation), so it is the same number; the sqrt is left out
(torch's vectorised CPU sqrt was seen 1 ulp off): a sum is within ε when it is at most
`geometry.last_square_within(ε)`, and ε's distance values are the host's sqrt of the
distinct sums.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .backends import triangle_mask
from .geometry import last_square_within

_CLASS_CHUNK = 1 << 22  # counters per bincount in the value pass (as `passes`)


def canonical_squares(ops: Any, XA: Any, XB: Any, i: Any, j: Any) -> Any:
    """The canonical squared distance of XA[i] and XB[j] on the device (its sqrt is
    `geometry.canonical_distances`)."""
    t = ops.torch
    out = t.empty(i.shape[0], dtype=t.float64, device=ops.device)
    step = ops.canonical_chunk
    for s in range(0, i.shape[0], step):
        diff = XA[i[s : s + step]] - XB[j[s : s + step]]
        sq = t.sort(diff * diff, dim=1).values
        acc = sq[:, 0].clone()
        for c in range(1, sq.shape[1]):
            acc += sq[:, c]
        out[s : s + step] = acc
    return out


def _row_block(ops: Any, op: Any, r0: int, m: int, lo2: float, hi2: float) -> tuple[Any, ...]:
    """`passes._minority_row_block` with every result a device tensor."""
    t, dev = ops.torch, ops.device
    r1 = min(r0 + op.block_rows, m)
    rows = t.zeros(r1 - r0, dtype=t.int64, device=dev)
    cols = t.zeros(m - r0, dtype=t.int64, device=dev)
    ii, jj, vv = [], [], []
    for c0 in range(r0, m, op.block_cols):
        s = ops.gemm(op.A[r0:r1], op.B[c0 : c0 + op.block_cols])
        triangle_mask(ops, s, r0, c0)
        lt = s < lo2
        rows += lt.sum(dim=1)
        cols[c0 - r0 : c0 - r0 + s.shape[1]] += lt.sum(dim=0)
        i, j = t.nonzero((s <= hi2) & ~lt, as_tuple=True)
        ii.append(i)
        jj.append(j + (c0 - r0))
        vv.append(s[i, j])
    return rows, cols, t.cat(ii), t.cat(jj), t.cat(vv)


def within_block(
    ops: Any, op: Any, Xd: Any, r0: int, m: int, eps: float, lo2: float, hi2: float
) -> tuple[int, np.ndarray, np.ndarray]:
    """A row block of `passes.minority_within_counts`."""
    t = ops.torch
    rows, cols, i, j, _ = _row_block(ops, op, r0, m, lo2, hi2)
    ok = canonical_squares(ops, Xd, Xd, i + r0, j + r0) <= last_square_within(eps)
    rows += t.bincount(i[ok], minlength=rows.shape[0])
    cols += t.bincount(j[ok], minlength=cols.shape[0])
    return r0, ops.host(rows), ops.host(cols)


def class_block(
    ops: Any, op: Any, Xd: Any, r0: int, m: int, lo2: float, hi2: float, limit: int
) -> tuple[Any, ...] | None:
    """A row block of `passes.minority_class_pass` (None: more values than `limit`)."""
    t = ops.torch
    rows, cols, i, j, _ = _row_block(ops, op, r0, m, lo2, hi2)
    w = m - r0
    if not i.shape[0]:
        return r0, ops.host(rows), ops.host(cols), np.empty(0), np.empty((0, w), np.int32)
    uniq, inv = t.unique(canonical_squares(ops, Xd, Xd, i + r0, j + r0), return_inverse=True)
    if uniq.shape[0] > limit:
        return None
    cnt = t.empty((uniq.shape[0], w), dtype=t.int32, device=ops.device)
    step = max(1, _CLASS_CHUNK // w)
    for v0 in range(0, uniq.shape[0], step):
        v1 = min(v0 + step, uniq.shape[0])
        sel = (inv >= v0) & (inv < v1)
        base = (inv[sel] - v0) * w
        flat = t.bincount(base + i[sel], minlength=(v1 - v0) * w)
        flat += t.bincount(base + j[sel], minlength=(v1 - v0) * w)
        cnt[v0:v1] = flat.reshape(v1 - v0, w).to(t.int32)
    # the distances: numpy's sqrt of the distinct sums; sums with one sqrt make one value
    values, first = np.unique(np.sqrt(ops.host(uniq)), return_index=True)
    counts = np.add.reduceat(ops.host(cnt), first, axis=0, dtype=np.int32)
    return r0, ops.host(rows), ops.host(cols), values, counts


def cross_block(
    ops: Any,
    op: Any,
    XA: Any,
    XB: Any,
    r0: int,
    m: int,
    big: int,
    eps: float | None,
    band: tuple[float, float],
    proximity: bool,
    small_sq: float,
) -> tuple[int, np.ndarray | None, list[float]]:
    """A row block of `passes.cross_pass`: counts within ε, and per block the sum of
    exp(−distance) (pairs closer than √small_sq by their canonical distance)."""
    t, dev = ops.torch, ops.device
    r1 = min(r0 + op.block_rows, m)
    rows = t.zeros(r1 - r0, dtype=t.int64, device=dev)
    lo2, hi2 = band
    within = last_square_within(eps) if eps is not None else 0.0
    sums = []
    for c0 in range(0, big, op.block_cols):
        s = ops.gemm(op.A[r0:r1], op.B[c0 : c0 + op.block_cols])
        if eps is not None:
            lt = s < lo2
            rows += lt.sum(dim=1)
            i, j = t.nonzero((s <= hi2) & ~lt, as_tuple=True)
            ok = canonical_squares(ops, XA, XB, i + r0, j + c0) <= within
            rows += t.bincount(i[ok], minlength=rows.shape[0])
        if proximity:
            i, j = t.nonzero(s < small_sq, as_tuple=True)
            near = canonical_squares(ops, XA, XB, i + r0, j + c0).sqrt_().neg_().exp_().sum()
            s[i, j] = float("inf")
            sums += [near, s.sqrt_().neg_().exp_().sum()]
    parts = ops.host(t.stack(sums)).tolist() if sums else []
    return r0, (ops.host(rows) if eps is not None else None), parts
