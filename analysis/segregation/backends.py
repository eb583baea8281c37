"""Block kernels behind one small interface, so that every pass over pairs runs unchanged
on the CPU (numpy blocks in threads, torch's CPU kernels where they are faster) or on a
GPU (torch blocks on any device)."""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from .inputs import SegregationInputError

Progress = Callable[[str, int, int], None]  # (stage, blocks done, blocks in stage)
_TORCH_MIN_BLOCK = 1 << 15  # smaller blocks: numpy (torch's per-call overhead dominates)


class NumpyOps:
    """Blocks small enough for the L2 cache; row blocks run in parallel threads.

    Block sides stay below 256 (rows) and 2040 (columns) so that counting booleans
    eight at a time in the bytes of a uint64 (`_packed_counts`) cannot overflow.
    Where torch is installed, its CPU kernels do the block product and the
    sqrt/exp/sum chain on the same memory (zero-copy views): about 20% less CPU
    time per pair than numpy's, and the results stay exact (see `geometry`).
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
            return _serial(tasks, stage, self.progress)
        torch_threads = self._torch.get_num_threads() if self._torch is not None else 0
        try:
            if self._torch is not None:
                self._torch.set_num_threads(1)
            with threadpool_limits(1, user_api="blas"):
                if self.n_jobs <= 1:
                    return _serial(tasks, stage, self.progress)
                with ThreadPoolExecutor(self.n_jobs, initializer=self._one_thread) as pool:
                    done = pool.map(lambda t: t(), tasks)
                    return _report(done, len(tasks), stage, self.progress)
        finally:
            if self._torch is not None:
                self._torch.set_num_threads(torch_threads)


def row_block_tasks(task: Callable[[int], Any], n: int, step: int) -> list[Callable[[], Any]]:
    """One task per row block: task(r0) for r0 = 0, step, 2·step, … below n."""
    return [lambda r0=r0: task(r0) for r0 in range(0, n, step)]


def _serial(tasks: list[Callable[[], Any]], stage: str, progress: Progress | None) -> list[Any]:
    return _report(map(lambda t: t(), tasks), len(tasks), stage, progress)


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


class TorchOps:
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
        return _serial(tasks, stage, self.progress)


def make_ops(backend: str = "numpy", device: str | None = None, n_jobs: int | None = None) -> Any:
    if backend == "numpy":
        if device not in (None, "cpu"):
            raise SegregationInputError("the numpy backend runs on the CPU; use backend='torch'")
        return NumpyOps(n_jobs=n_jobs)
    if backend == "torch":
        return TorchOps(device=device)
    raise SegregationInputError(f"unknown backend {backend!r}; expected 'numpy' or 'torch'")


def triangle_mask(ops: Any, s: Any, r0: int, c0: int) -> None:
    """Exclude pairs with column index <= row index (the lower triangle and the diagonal).

    NaN, not inf: every comparison with NaN is false, even `<= inf` (an open bracket).
    """
    rows, cols = s.shape
    if c0 >= r0 + rows:
        return
    ops.set_where(s, ops.upper_excluded(rows, cols, r0, c0), math.nan)
