"""Exact segregation indices of a population with a binary group, in memory-bounded blocks.

Why our own code: the seed paper's indices were too slow beyond 10,000 people (it
subsampled), and segregation libraries such as PySAL's `segregation` measure areal
units with geometries, not point clouds in feature space. Here every index is
computed on all pairs, block by block, with memory that does not grow with n²
(numpy threads on the CPU, or torch on a GPU); scikit-learn supplies KMeans.

Exactness. Block distances come from one matrix product of augmented vectors
(|a|² − 2a·b + |b|²), which is fast but carries rounding error. Wherever that
error could change a result — a pair within `tol` of a threshold (ε, a quantile
bracket) or a pair so close that sqrt amplifies the error — the distance is
recomputed with the *canonical* formula `canonical_distances`: squared coordinate
differences sorted ascending and summed left to right, then sqrt. The canonical
formula is symmetric and ignores the order of coordinates, so ties stay ties.
`tol` is a rigorous bound on the product's error (see `_geometry`). Hence the
centralization and ε are bitwise those of the canonical formula; in the average
proximity each pair's distance errs by at most 5·tol (~1e-12 on the normalised
item scale, where |x − mean|² is at most a few units).

Definitions (minority = the smaller group unless named):
* average spatial proximity: mean of exp(−‖x_i − x_j‖) over minority × majority pairs;
* centralization: ε = q-quantile (numpy's linear interpolation) of the distances of
  distinct minority pairs (`eps_pairs="distinct"`, q = 0.2), or — as in the authors'
  code — of all ordered minority pairs *including* each member with itself
  (`eps_pairs="ordered_with_self"`, used there with q = 0.1). A minority member is
  central when minority members are more than half of all members within ε of it
  (itself included); the index is the central share of the minority;
* Atkinson (b = 0.5, Massey–Denton): 1 − P/(1−P)·|Σ_i (1−p_i)^{1−b} p_i^b t_i/(P·T)|^{1/(1−b)}
  over neighbourhoods (KMeans with 30 clusters fitted on the population, or labels).
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

Progress = Callable[[str, int, int], None]  # (stage, blocks done, blocks in stage)
EpsPairs = Literal["distinct", "ordered_with_self"]
EPS_PAIRS: tuple[str, ...] = ("distinct", "ordered_with_self")
_U = np.finfo(np.float64).eps / 2  # unit roundoff
_SMALL_SQ = 1e-2  # below this squared distance, proximity uses the canonical distance
_FULL_PAIRS = 200_000  # up to this many minority pairs, ε comes from all pairs directly
_SAMPLE_PAIRS = 1_000_000  # pairs sampled to bracket the ε order statistic
_EXACT_CHUNK = 1 << 18
_CANDIDATE_BUDGET = 20_000_000  # above this many expected bracket pairs, narrow it first
_TORCH_MIN_BLOCK = 1 << 15  # smaller blocks: numpy (torch's per-call overhead dominates)
_MAX_CLASSES_ON = True  # try the value-counting bracket pass first (see _Classes)
_CLASS_CHUNK = 1 << 22  # counters per bincount in the class pass (32 MB of int64)


class SegregationInputError(ValueError):
    """Input the indices cannot be computed on; the message says what is wrong."""


@dataclass
class IndexResult:
    n: int
    n_minority: int
    minority: Any
    eps: float
    centralization: float
    atkinson: float
    avg_proximity: float
    kmeans: Any = field(default=None, repr=False)

    def to_json(self) -> dict[str, Any]:
        minority = self.minority.item() if isinstance(self.minority, np.generic) else self.minority
        return {
            "n": int(self.n),
            "minority": minority,
            "eps": float(self.eps),
            "centralization": float(self.centralization),
            "atkinson": float(self.atkinson),
            "avg_proximity": float(self.avg_proximity),
        }


# --------------------------------------------------------------------------------------
# input checks
# --------------------------------------------------------------------------------------
def as_population(x: Any) -> np.ndarray:
    """Check and convert a population to a finite float64 (n, d) array."""
    X = np.asarray(x, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] == 0:
        raise SegregationInputError(f"population must be an (n, d) array, got shape {X.shape}")
    bad = ~np.isfinite(X)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise SegregationInputError(f"row {r + 1}, feature {c + 1}: value is NaN or infinite")
    return np.ascontiguousarray(X)


def split_groups(
    groups: Sequence[Any] | np.ndarray, minority: Any = None
) -> tuple[np.ndarray, Any]:
    """Boolean minority mask and the minority label.

    The minority is the smaller group unless named; with equal sizes, the label that
    sorts first (as text) — so relabelling groups never changes which group is which.
    """
    g = np.asarray(groups, dtype=object)
    if g.ndim != 1:
        raise SegregationInputError("groups must be one-dimensional")
    missing = np.array([v is None or (isinstance(v, float) and math.isnan(v)) for v in g])
    if missing.any():
        raise SegregationInputError(f"row {int(np.flatnonzero(missing)[0]) + 1}: group is missing")
    labels, counts = np.unique(g.astype(str), return_counts=True)
    if len(labels) != 2:
        shown = ", ".join(labels[:5])
        raise SegregationInputError(
            f"need exactly two groups, found {len(labels)}" + (f" ({shown})" if shown else "")
        )
    text = g.astype(str)
    if minority is None:
        key = labels[0] if counts[0] <= counts[1] else labels[1]
    else:
        key = str(minority)
        if key not in labels:
            raise SegregationInputError(
                f"minority {minority!r} is not one of the groups {labels[0]!r}, {labels[1]!r}"
            )
    is_min = text == key
    label = g[int(np.flatnonzero(is_min)[0])]
    if is_min.sum() < 2:
        raise SegregationInputError(
            f"the minority group {label!r} has {int(is_min.sum())} member(s); at least 2 needed"
        )
    return is_min, label


# --------------------------------------------------------------------------------------
# canonical distances and geometry
# --------------------------------------------------------------------------------------
def canonical_distances(X: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """‖X[i] − X[j]‖ with squared differences sorted ascending and summed left to right.

    Column by column on X's transpose (gathers of one coordinate at a time, a sort along
    the first axis, then acc += row): twice as fast as sorting rows, the same numbers.
    """
    out = np.empty(len(i), dtype=np.float64)
    XT = _transposed(X)
    d = XT.shape[0]
    for s in range(0, len(i), _EXACT_CHUNK):
        ii, jj = i[s : s + _EXACT_CHUNK], j[s : s + _EXACT_CHUNK]
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
class _Geometry:
    X: np.ndarray  # the population as given (canonical distances use it)
    A: np.ndarray  # rows [-2·xc, |xc|², 1]
    B: np.ndarray  # rows [xc, 1, |xc|²]; A[i]·B[j] = |xc_i − xc_j|²
    tol: float


def _geometry(X: np.ndarray) -> _Geometry:
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
    return _Geometry(X=X, A=A, B=B, tol=tol)


# --------------------------------------------------------------------------------------
# block kernels: numpy (threads) and torch (any device)
# --------------------------------------------------------------------------------------
class _NumpyOps:
    """Blocks small enough for the L2 cache; row blocks run in parallel threads.

    Block sides stay below 256 (rows) and 2040 (columns) so that counting booleans
    eight at a time in the bytes of a uint64 (`_packed_counts`) cannot overflow.
    Where torch is installed, its CPU kernels do the block product and the
    sqrt/exp/sum chain on the same memory (zero-copy views): about 20% less CPU
    time per pair than numpy's, and the results stay exact (see module docstring).
    """

    def __init__(self, block_rows: int = 128, block_cols: int = 1024, n_jobs: int | None = None):
        self.block_rows, self.block_cols = block_rows, block_cols
        self.n_jobs = n_jobs or len(os.sched_getaffinity(0))
        self.progress: Progress | None = None
        self._local = threading.local()
        try:
            import torch

            self._torch: Any = torch
        except ImportError:  # pragma: no cover - torch is in requirements.txt
            self._torch = None

    def put(self, a: np.ndarray) -> np.ndarray:
        return a

    def gemm(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """a @ b.T into a per-thread buffer of that shape (saves an allocation and its
        page faults per block); the caller is done with a block before the next."""
        if self._torch is None or a.shape[0] * b.shape[0] < _TORCH_MIN_BLOCK:
            return a @ b.T
        t = self._torch
        shape = (a.shape[0], b.shape[0])
        bufs = self._local.__dict__.setdefault("bufs", {})
        out = bufs.get(shape)
        if out is None:
            out = bufs[shape] = t.empty(shape, dtype=t.float64)
        t.mm(t.from_numpy(a), t.from_numpy(b).T, out=out)
        return out.numpy()

    @staticmethod
    def count(mask: np.ndarray, axis: int | None = None) -> np.ndarray | int:
        rows, cols = mask.shape
        if axis is None or cols % 8 or rows > 255 or cols > 2040 or not mask.flags.c_contiguous:
            return np.count_nonzero(mask, axis=axis)
        return _packed_counts(mask, axis)

    @staticmethod
    def nonzero(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Row and column indices of True entries (flat search: 2-D np.nonzero is slow)."""
        flat = np.flatnonzero(mask)
        return np.divmod(flat, mask.shape[1])

    @staticmethod
    def host(a: Any) -> np.ndarray:
        return np.asarray(a)

    @staticmethod
    def index(i: np.ndarray) -> np.ndarray:
        return i

    @staticmethod
    def set_where(s: np.ndarray, mask: np.ndarray, value: float) -> None:
        s[mask] = value

    @staticmethod
    def upper_excluded(rows: int, cols: int, r0: int, c0: int) -> np.ndarray:
        return np.arange(c0, c0 + cols)[None, :] <= np.arange(r0, r0 + rows)[:, None]

    @staticmethod
    def set_at(s: np.ndarray, i: np.ndarray, j: np.ndarray, value: float) -> None:
        s[i, j] = value

    @staticmethod
    def minimum(s: np.ndarray) -> float:
        return float(s.min())

    def exp_neg_sqrt_sum(self, s: np.ndarray) -> float:
        if self._torch is not None and s.size >= _TORCH_MIN_BLOCK:
            return float(self._torch.from_numpy(s).sqrt_().neg_().exp_().sum())
        np.sqrt(s, out=s)
        np.negative(s, out=s)
        np.exp(s, out=s)
        return float(s.sum())

    def _one_thread(self) -> None:
        """Worker-thread initializer: torch's OpenMP thread count belongs to each calling
        thread, so a pool thread would otherwise start a team of all cores per block (their
        spin-waits tripled the CPU time of the ε pass on 2 cores)."""
        if self._torch is not None:
            self._torch.set_num_threads(1)

    def run(self, tasks: list[Callable[[], Any]], stage: str = "") -> list[Any]:
        """Run row-block tasks; BLAS and torch are held to one thread each (their own
        threads on these small blocks only fight ours and run many times slower).
        torch's thread count is restored when the tasks end."""
        from threadpoolctl import threadpool_limits

        if len(tasks) <= 1:  # one small block: not worth threadpoolctl's ~1 ms
            return _report(map(lambda t: t(), tasks), len(tasks), stage, self.progress)
        torch_threads = self._torch.get_num_threads() if self._torch is not None else 0
        try:
            if self._torch is not None:
                self._torch.set_num_threads(1)
            with threadpool_limits(1, user_api="blas"):
                if self.n_jobs <= 1:
                    return _report(map(lambda t: t(), tasks), len(tasks), stage, self.progress)
                with ThreadPoolExecutor(self.n_jobs, initializer=self._one_thread) as pool:
                    done = pool.map(lambda t: t(), tasks)
                    return _report(done, len(tasks), stage, self.progress)
        finally:
            if self._torch is not None:
                self._torch.set_num_threads(torch_threads)


def _report(results: Iterable[Any], total: int, stage: str, progress: Progress | None) -> list[Any]:
    out = []
    for k, r in enumerate(results, 1):
        out.append(r)
        if progress is not None:
            progress(stage, k, total)
    return out


def _packed_counts(mask: np.ndarray, axis: int) -> np.ndarray:
    """Row (axis=1) or column (axis=0) counts of a boolean block, eight lanes per uint64.

    Each byte of the uint64 sums holds the count of one lane; with at most 255 terms
    per lane no byte overflows. About ten times faster than count_nonzero(axis=...).
    """
    rows, cols = mask.shape
    words = mask.view(np.uint64)
    if axis == 1:
        return words.sum(axis=1).view(np.uint8).reshape(rows, 8).sum(axis=1, dtype=np.int64)
    return words.sum(axis=0).view(np.uint8).astype(np.int64)


class _TorchOps:
    def __init__(
        self,
        device: str | None = None,
        block_rows: int | None = None,
        block_cols: int | None = None,
    ):
        import torch

        self.torch = torch
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        gpu = self.device.type != "cpu"
        self.block_rows = block_rows or (4096 if gpu else 512)
        self.block_cols = block_cols or (16384 if gpu else 4096)
        self.progress: Progress | None = None

    def put(self, a: np.ndarray) -> Any:
        return self.torch.from_numpy(a).to(self.device)

    def gemm(self, a: Any, b: Any) -> Any:
        return a @ b.T

    @staticmethod
    def count(mask: Any, axis: int | None = None) -> Any:
        return mask.sum() if axis is None else mask.sum(dim=axis)

    def nonzero(self, mask: Any) -> tuple[np.ndarray, np.ndarray]:
        i, j = self.torch.nonzero(mask, as_tuple=True)
        return i.cpu().numpy(), j.cpu().numpy()

    @staticmethod
    def host(a: Any) -> np.ndarray:
        return a.cpu().numpy() if hasattr(a, "cpu") else np.asarray(a)

    def index(self, i: np.ndarray) -> Any:
        return self.torch.from_numpy(i).to(self.device)

    @staticmethod
    def set_where(s: Any, mask: Any, value: float) -> None:
        s.masked_fill_(mask, value)

    def upper_excluded(self, rows: int, cols: int, r0: int, c0: int) -> Any:
        t, dev = self.torch, self.device
        return (
            t.arange(c0, c0 + cols, device=dev)[None, :]
            <= t.arange(r0, r0 + rows, device=dev)[:, None]
        )

    def set_at(self, s: Any, i: np.ndarray, j: np.ndarray, value: float) -> None:
        s[self.torch.from_numpy(i).to(s.device), self.torch.from_numpy(j).to(s.device)] = value

    @staticmethod
    def minimum(s: Any) -> float:
        return float(s.min())

    @staticmethod
    def exp_neg_sqrt_sum(s: Any) -> float:
        return float(s.sqrt_().neg_().exp_().sum())

    def run(self, tasks: list[Callable[[], Any]], stage: str = "") -> list[Any]:
        return _report(map(lambda t: t(), tasks), len(tasks), stage, self.progress)


def make_ops(backend: str = "numpy", device: str | None = None, n_jobs: int | None = None) -> Any:
    if backend == "numpy":
        if device not in (None, "cpu"):
            raise SegregationInputError("the numpy backend runs on the CPU; use backend='torch'")
        return _NumpyOps(n_jobs=n_jobs)
    if backend == "torch":
        return _TorchOps(device=device)
    raise SegregationInputError(f"unknown backend {backend!r}; expected 'numpy' or 'torch'")


def _triangle_mask(ops: Any, s: Any, r0: int, c0: int) -> None:
    """Exclude pairs with column index <= row index (the lower triangle and the diagonal).

    NaN, not inf: every comparison with NaN is false, even `<= inf` (an open bracket).
    """
    rows, cols = s.shape
    if c0 >= r0 + rows:
        return
    ops.set_where(s, ops.upper_excluded(rows, cols, r0, c0), math.nan)


# --------------------------------------------------------------------------------------
# passes over pairs
# --------------------------------------------------------------------------------------
@dataclass
class _Bracket:
    below: np.ndarray  # per minority member: partners with block value < lo2
    lo2: float
    hi2: float
    g: np.ndarray  # block values of the pairs in [lo2, hi2] ...
    ci: np.ndarray  # ... and their (local) indices, ci < cj
    cj: np.ndarray


def _minority_row_block(
    ops: Any, A: Any, B: Any, r0: int, m: int, lo2: float, hi2: float, values: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """One row block of the distinct minority pairs (upper triangle), the scan every
    minority pass shares: per row and per column (offset from r0) how many partners have
    a block value below lo2, and the pairs with block values in [lo2, hi2] as row and
    column offsets from r0 (with their block values when `values`)."""
    r1 = min(r0 + ops.block_rows, m)
    rows = np.zeros(r1 - r0, dtype=np.int64)
    cols = np.zeros(m - r0, dtype=np.int64)
    ii, jj, vals = [np.empty(0, np.int64)], [np.empty(0, np.int64)], [np.empty(0)]
    for c0 in range(r0, m, ops.block_cols):
        s = ops.gemm(A[r0:r1], B[c0 : c0 + ops.block_cols])
        _triangle_mask(ops, s, r0, c0)
        lt = s < lo2
        rc = ops.host(ops.count(lt, axis=1))
        rows += rc
        cols[c0 - r0 : c0 - r0 + s.shape[1]] += ops.host(ops.count(lt, axis=0))
        le = s <= hi2
        if int(ops.count(le)) > int(rc.sum()):
            i, j = ops.nonzero(le & ~lt)
            if values:
                vals.append(ops.host(s[ops.index(i), ops.index(j)]))
            ii.append(i.astype(np.int64))
            jj.append(j + (c0 - r0))
    band_v = np.concatenate(vals) if values else None
    return rows, cols, np.concatenate(ii), np.concatenate(jj), band_v


def _minority_bracket_pass(
    ops: Any, geo: _Geometry, idx: np.ndarray, lo2: float, hi2: float
) -> _Bracket:
    """Distinct minority pairs: per member, how many partners have a block value below
    lo2; and the block values and (local) indices of the pairs with values in [lo2, hi2]."""
    A, B = ops.put(geo.A[idx]), ops.put(geo.B[idx])
    m = len(idx)

    def task(r0: int) -> tuple[Any, ...]:
        rows, cols, i, j, v = _minority_row_block(ops, A, B, r0, m, lo2, hi2, values=True)
        return r0, rows, cols, v, (i + r0).astype(np.int32), (j + r0).astype(np.int32)

    below = np.zeros(m, dtype=np.int64)
    vals, ii, jj = [np.empty(0)], [np.empty(0, np.int32)], [np.empty(0, np.int32)]
    tasks = [lambda r0=r0: task(r0) for r0 in range(0, m, ops.block_rows)]
    for r0, rows, cols, v, i, j in ops.run(tasks, "minority pairs (ε)"):
        below[r0 : r0 + len(rows)] += rows
        below[r0:] += cols
        vals.append(v)
        ii.append(i)
        jj.append(j)
    return _Bracket(below, lo2, hi2, np.concatenate(vals), np.concatenate(ii), np.concatenate(jj))


def _counts_from_bracket(
    geo: _Geometry, idx: np.ndarray, br: _Bracket | _Classes, eps: float
) -> np.ndarray | None:
    """Per minority member, other minority members within ε — from the bracket pass alone,
    when ε² ± tol lies inside the bracket (else None: a counting pass is needed)."""
    if isinstance(br, _Classes):
        e2 = eps * eps
        if not (br.lo2 + 2 * geo.tol < e2 < br.hi2 - 2 * geo.tol):
            return None
        within = br.counts[br.values <= eps].sum(axis=0, dtype=np.int64)
        return br.below + within
    lo2, hi2 = eps * eps - geo.tol, eps * eps + geo.tol
    if not (br.lo2 < lo2 and hi2 < br.hi2):
        return None
    counts = br.below.copy()
    inside = br.g < lo2
    band = np.flatnonzero(~inside & (br.g <= hi2))
    if len(band):
        ok = canonical_distances(geo.X, idx[br.ci[band]], idx[br.cj[band]]) <= eps
        inside[band[ok]] = True
    np.add.at(counts, br.ci[inside], 1)
    np.add.at(counts, br.cj[inside], 1)
    return counts


@dataclass
class _Classes:
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


class _TooManyClasses(Exception):
    """The bracket holds more distinct distances than the class pass may keep."""


def _max_classes(m: int) -> int:
    """At most 256 classes, and at most 64·10⁶ counters (256 MB of int32) in all."""
    return int(max(1, min(256, 64_000_000 // max(m, 1))))


def _minority_class_pass(
    ops: Any, geo: _Geometry, idx: np.ndarray, lo2: float, hi2: float
) -> _Classes:
    """Distinct minority pairs: per member, partners below lo2, and, for the pairs with
    block values in [lo2, hi2], their canonical distances counted per member and value.
    Raises _TooManyClasses (after stopping the other tasks) when the values are too many
    to count this way — continuous data, where the pair-keeping pass is the right one."""
    A, B = ops.put(geo.A[idx]), ops.put(geo.B[idx])
    m = len(idx)
    limit = _max_classes(m)
    stop = threading.Event()

    def task(r0: int) -> tuple[Any, ...] | None:
        if stop.is_set():
            return None
        rows, cols, i, j, _ = _minority_row_block(ops, A, B, r0, m, lo2, hi2)
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
    tasks = [lambda r0=r0: task(r0) for r0 in range(0, m, ops.block_rows)]
    for out in ops.run(tasks, "minority pairs (ε)"):
        if out is None or stop.is_set():
            stop.set()
            continue
        r0, rows, cols, uniq, cnt = out
        below[r0 : r0 + len(rows)] += rows
        below[r0:] += cols
        for v, c in zip(uniq.tolist(), cnt, strict=True):
            acc = per_value.get(v)
            if acc is None:
                if len(per_value) >= limit:
                    stop.set()
                    break
                acc = per_value[v] = np.zeros(m, dtype=np.int32)
            acc[r0:] += c
    if stop.is_set():
        raise _TooManyClasses
    values = np.array(sorted(per_value), dtype=np.float64)
    counts = (
        np.stack([per_value[v] for v in values.tolist()])
        if len(values)
        else np.zeros((0, m), dtype=np.int32)
    )
    return _Classes(below, lo2, hi2, values, counts)


def _class_order_stats(cls: _Classes, ranks: list[int], tol: float) -> dict[int, float] | None:
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


def _minority_within_counts(ops: Any, geo: _Geometry, idx: np.ndarray, eps: float) -> np.ndarray:
    """For each minority member, how many *other* minority members lie within ε."""
    lo2, hi2 = eps * eps - geo.tol, eps * eps + geo.tol
    A, B = ops.put(geo.A[idx]), ops.put(geo.B[idx])
    m = len(idx)

    def task(r0: int) -> tuple[int, np.ndarray, np.ndarray]:
        rows, cols, i, j, _ = _minority_row_block(ops, A, B, r0, m, lo2, hi2)
        if len(i):
            ok = canonical_distances(geo.X, idx[i + r0], idx[j + r0]) <= eps
            rows += np.bincount(i[ok], minlength=len(rows))
            cols += np.bincount(j[ok], minlength=len(cols))
        return r0, rows, cols

    counts = np.zeros(m, dtype=np.int64)
    for r0, rows, cols in ops.run(
        [lambda r0=r0: task(r0) for r0 in range(0, m, ops.block_rows)], "minority pairs"
    ):
        counts[r0 : r0 + len(rows)] += rows
        counts[r0:] += cols
    return counts


def _cross_pass(
    ops: Any,
    geo: _Geometry,
    rows_idx: np.ndarray,
    cols_idx: np.ndarray,
    eps: float | None,
    proximity: bool,
) -> tuple[np.ndarray | None, float]:
    """Minority rows × majority columns: per-row counts within ε (if eps is given) and
    the sum of exp(−distance) over all pairs (if proximity)."""
    A, B = ops.put(geo.A[rows_idx]), ops.put(geo.B[cols_idx])
    m, big = len(rows_idx), len(cols_idx)
    br, bc = ops.block_rows, ops.block_cols
    lo2 = hi2 = 0.0
    if eps is not None:
        lo2, hi2 = eps * eps - geo.tol, eps * eps + geo.tol

    def task(r0: int) -> tuple[int, np.ndarray | None, list[float]]:
        r1 = min(r0 + br, m)
        rows = np.zeros(r1 - r0, dtype=np.int64) if eps is not None else None
        sums: list[float] = []
        for c0 in range(0, big, bc):
            s = ops.gemm(A[r0:r1], B[c0 : c0 + bc])
            if rows is not None:
                lt = s < lo2
                rc = ops.host(ops.count(lt, axis=1))
                rows += rc
                le = s <= hi2
                if int(ops.count(le)) > int(rc.sum()):
                    i, j = ops.nonzero(le & ~lt)
                    ok = canonical_distances(geo.X, rows_idx[i + r0], cols_idx[j + c0]) <= eps
                    rows += np.bincount(i[ok], minlength=len(rows))
            if proximity:
                if ops.minimum(s) < _SMALL_SQ:
                    i, j = ops.nonzero(s < _SMALL_SQ)
                    d = canonical_distances(geo.X, rows_idx[i + r0], cols_idx[j + c0])
                    sums.append(float(np.exp(-d).sum()))
                    ops.set_at(s, i, j, math.inf)
                sums.append(ops.exp_neg_sqrt_sum(s))
        return r0, rows, sums

    counts = np.zeros(m, dtype=np.int64) if eps is not None else None
    parts: list[float] = []
    for r0, rows, sums in ops.run(
        [lambda r0=r0: task(r0) for r0 in range(0, m, br)], "minority x majority"
    ):
        if counts is not None and rows is not None:
            counts[r0 : r0 + len(rows)] += rows
        parts.extend(sums)
    return counts, math.fsum(parts)


# --------------------------------------------------------------------------------------
# ε: an exact order statistic of the minority's pairwise distances
# --------------------------------------------------------------------------------------
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
    geo: _Geometry,
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
            _triangle_mask(ops, s, r0, c0)
            lt = s < base_lo
            below += int(ops.count(lt))
            v = ops.host(s[(s <= base_hi) & ~lt])
            k = np.minimum(((v - base_lo) / width).astype(np.int64), bins - 1)
            hist += np.bincount(k, minlength=bins)
        return below, hist

    below, hist = 0, np.zeros(bins, dtype=np.int64)
    for b, h in ops.run([lambda r0=r0: task(r0) for r0 in range(0, m, br)], "ε histogram"):
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
    ops: Any, geo: _Geometry, idx: np.ndarray, ranks: list[int], seed: int
) -> tuple[dict[int, float], _Bracket | _Classes | None]:
    """Exact values of the given 0-based ranks among distinct-pair distances of idx.

    Large populations: a random sample of pairs brackets the ranks; one blocked pass
    counts the pairs surely below the bracket and resolves the ones inside it. First
    the class pass (`_Classes`): the canonical distances of the bracket's pairs,
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
        ((geo.X[i[c : c + _EXACT_CHUNK]] - geo.X[j[c : c + _EXACT_CHUNK]]) ** 2).sum(axis=1)
        for c in range(0, len(i), _EXACT_CHUNK)
    ]
    sample = np.sort(np.concatenate(parts))  # a guide only
    s, tol2 = len(sample), 2 * geo.tol
    p_lo, p_hi = min(ranks) / (n_pairs - 1), max(ranks) / (n_pairs - 1)
    classes = _MAX_CLASSES_ON
    for z in (8.0, 32.0, math.inf):
        lo_p = p_lo - z * (math.sqrt(p_lo * (1 - p_lo) / s) + 1.0 / s)
        hi_p = p_hi + z * (math.sqrt(p_hi * (1 - p_hi) / s) + 1.0 / s)
        # 4·tol beyond the sampled values: a tie at the rank stays inside the bracket
        lo2 = float(sample[int(lo_p * (s - 1))]) - 2 * tol2 if lo_p > 0 else -math.inf
        hi2 = float(sample[int(math.ceil(hi_p * (s - 1)))]) + 2 * tol2 if hi_p < 1 else math.inf
        if classes:
            try:
                cls = _minority_class_pass(ops, geo, idx, lo2, hi2)
            except _TooManyClasses:
                classes = False  # continuous data: keep pairs instead
            else:
                found = _class_order_stats(cls, ranks, geo.tol)
                if found is not None:
                    return found, cls
                continue
        expected = (min(hi_p, 1.0) - max(lo_p, 0.0)) * n_pairs
        if expected > _CANDIDATE_BUDGET:
            bins = int(min(1 << 20, 8 * expected / _CANDIDATE_BUDGET))
            lo2, hi2 = _refine_bracket(ops, geo, idx, lo2, hi2, ranks, bins)
        br = _minority_bracket_pass(ops, geo, idx, lo2, hi2)
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
    return _eps(ops, _geometry(Xa), np.flatnonzero(is_min), q, eps_pairs, seed)[0]


def _eps(
    ops: Any, geo: _Geometry, idx: np.ndarray, q: float, eps_pairs: str, seed: int
) -> tuple[float, _Bracket | _Classes | None]:
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


# --------------------------------------------------------------------------------------
# public indices
# --------------------------------------------------------------------------------------
def fit_units(X: np.ndarray, clusters: int = 30, seed: int = 0) -> Any:
    """KMeans neighbourhoods fitted on the (original) population (sklearn's defaults,
    one k-means++ initialisation seeded by `seed`)."""
    from sklearn.cluster import KMeans

    if clusters < 1:
        raise SegregationInputError(f"clusters must be >= 1, got {clusters}")
    distinct = len(np.unique(X, axis=0)) if len(X) <= 200_000 else len(X)
    if clusters > distinct:
        raise SegregationInputError(
            f"{clusters} clusters requested but the population has only {distinct} distinct "
            "profiles; lower --clusters"
        )
    return KMeans(n_clusters=clusters, random_state=seed, n_init=1).fit(X)


def unit_labels(kmeans: Any, X: np.ndarray) -> np.ndarray:
    """Neighbourhood of each profile under a fitted KMeans (the original population's)."""
    return kmeans.predict(np.asarray(X, dtype=np.float64))


def atkinson(is_minority: np.ndarray, units: Any, b: float = 0.5) -> float:
    """Atkinson index over neighbourhood labels (empty neighbourhoods do not count)."""
    is_min = np.asarray(is_minority, dtype=bool)
    _, lab = np.unique(np.asarray(units), return_inverse=True)
    t = np.bincount(lab).astype(float)
    mi = np.bincount(lab, weights=is_min.astype(float))
    T, P = t.sum(), is_min.mean()
    if not 0 < P < 1:
        raise SegregationInputError("Atkinson needs members of both groups")
    p = mi / t
    s = np.sum((1 - p) ** (1 - b) * p**b * t / (P * T))
    return float(1 - P / (1 - P) * abs(s) ** (1 / (1 - b)))


def centralization(
    X: Any,
    groups: Any,
    eps: float | None = None,
    *,
    minority: Any = None,
    eps_quantile: float = 0.2,
    eps_pairs: EpsPairs = "distinct",
    backend: str = "numpy",
    device: str | None = None,
    n_jobs: int | None = None,
) -> float:
    r = segregation_indices(
        X,
        groups,
        minority=minority,
        eps=eps,
        eps_quantile=eps_quantile,
        eps_pairs=eps_pairs,
        backend=backend,
        device=device,
        n_jobs=n_jobs,
        want=("centralization",),
    )
    return r.centralization


def avg_proximity(
    X: Any,
    groups: Any,
    *,
    minority: Any = None,
    backend: str = "numpy",
    device: str | None = None,
    n_jobs: int | None = None,
) -> float:
    r = segregation_indices(
        X,
        groups,
        minority=minority,
        backend=backend,
        device=device,
        n_jobs=n_jobs,
        want=("avg_proximity",),
    )
    return r.avg_proximity


def segregation_indices(
    X: Any,
    groups: Any,
    *,
    minority: Any = None,
    eps: float | None = None,
    eps_quantile: float = 0.2,
    eps_pairs: EpsPairs = "distinct",
    units: Any = None,
    kmeans: Any = None,
    clusters: int = 30,
    seed: int = 0,
    backend: str = "numpy",
    device: str | None = None,
    n_jobs: int | None = None,
    want: Sequence[str] = ("centralization", "atkinson", "avg_proximity"),
    progress: Progress | None = None,
) -> IndexResult:
    """All three indices, fused so that each pair is visited as few times as possible.

    For a post-recourse population pass the original's `eps` and `kmeans` (from its
    IndexResult) and its `minority`, so that neighbourhoods stay those of the original.
    """
    Xa = as_population(X)
    is_min, label = split_groups(groups, minority)
    if len(is_min) != len(Xa):
        raise SegregationInputError(f"{len(Xa)} profiles but {len(is_min)} group labels")
    if eps is not None and not (math.isfinite(eps) and eps >= 0):
        raise SegregationInputError(f"eps must be a finite number >= 0, got {eps}")
    if not 0.0 <= eps_quantile <= 1.0:
        raise SegregationInputError(f"eps quantile must be in [0, 1], got {eps_quantile}")
    atk, km = math.nan, kmeans
    if "atkinson" in want:
        if units is not None:
            lab = np.asarray(units)
            if len(lab) != len(Xa):
                raise SegregationInputError(f"{len(Xa)} profiles but {len(lab)} unit labels")
        else:
            km = km if km is not None else fit_units(Xa, clusters, seed)
            lab = unit_labels(km, Xa)
        atk = atkinson(is_min, lab)
    ops = make_ops(backend, device, n_jobs)
    ops.progress = progress
    geo = _geometry(Xa)
    idx_min, idx_maj = np.flatnonzero(is_min), np.flatnonzero(~is_min)

    cen, prox, eps_v = math.nan, math.nan, math.nan if eps is None else float(eps)
    if "centralization" in want:
        counts = None
        if eps is None:
            eps_v, bracket = _eps(ops, geo, idx_min, eps_quantile, eps_pairs, seed)
            if bracket is not None:
                counts = _counts_from_bracket(geo, idx_min, bracket, eps_v)
        if counts is None:
            counts = _minority_within_counts(ops, geo, idx_min, eps_v)
        n_min_in = 1 + counts
    n_maj_in, psum = None, math.nan
    if "centralization" in want or "avg_proximity" in want:
        n_maj_in, psum = _cross_pass(
            ops,
            geo,
            idx_min,
            idx_maj,
            eps_v if "centralization" in want else None,
            "avg_proximity" in want,
        )
    if "centralization" in want:
        cen = float(np.mean(n_min_in > n_maj_in))
    if "avg_proximity" in want:
        prox = psum / (len(idx_min) * len(idx_maj))

    return IndexResult(
        n=len(Xa),
        n_minority=len(idx_min),
        minority=label,
        eps=eps_v,
        centralization=cen,
        atkinson=atk,
        avg_proximity=prox,
        kmeans=km,
    )
