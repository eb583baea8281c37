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
_TORCH_PAIRS = 300_000_000  # smaller passes do not import torch (seconds; numpy's exp is 3×)
_LAZY = object()  # NumpyOps._torch before torch is wanted
_NUMBA_PAIRS = 50_000_000  # smaller cross passes run numpy's blocks (under 0.3 s of CPU)


def _numpy_exp_vectorised() -> bool:
    """Whether numpy's float64 exp runs in SIMD here: numpy vectorises it for AVX-512F
    only (elsewhere it calls libm per element, 3× slower than torch's SLEEF kernel; with
    AVX-512 numpy's took half of torch's time, measured on an AMD EPYC Zen 4)."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:  # pragma: no cover - numpy < 2
        return False
    return bool(__cpu_features__.get("AVX512F"))


#: numpy's exp and product on the CPU; torch's kernels are imported only where numpy's
#: float64 exp is not vectorised (and a pass is large)
NUMPY_EXP = _numpy_exp_vectorised()


class NumpyOps:
    """Blocks small enough for the L2 cache; row blocks run in parallel threads.

    Block sides stay below 256 (rows) and 2040 (columns) so that counting booleans
    eight at a time in the bytes of a uint64 (`_packed_counts`) cannot overflow.
    Passes that only compare block values with thresholds screen in float32 (`screen`:
    OpenBLAS's sgemm, the pairs near a threshold rechecked in float64, so the counts are
    the float64 pass's). Where numpy's float64 exp is scalar (`NUMPY_EXP` false: no
    AVX-512) and a pass is large, torch's CPU kernels do the float64 product and the
    exp/sum chain of proximity on the same memory (zero-copy views); with AVX-512 numpy's
    own exp is twice as fast as torch's and torch is not imported. The results stay exact
    either way (see `geometry`).
    """

    single = True  # passes may screen in float32 (`screen`): exact, and cheaper on AVX2

    def __init__(self, block_rows: int = 240, block_cols: int = 1024, n_jobs: int | None = None):
        self.block_rows, self.block_cols = block_rows, block_cols
        self.n_jobs = n_jobs or len(os.sched_getaffinity(0))
        self.progress: Progress | None = None
        self._local = threading.local()
        self._torch: Any = _LAZY  # imported by `prepare` for passes large enough to repay it
        # float32 blocks: twice the sides (half the bytes per value), within the packed
        # counts' limits; fewer blocks, less Python per pair
        self.single_blocks = (min(240, 2 * block_rows), min(2040, 2 * block_cols))

    def prepare(self, pairs: int) -> None:
        """Import torch for its kernels before a pass of this many pairs, when the pass is
        long enough to repay the import (seconds); small populations stay on numpy's."""
        # _TORCH_MIN_BLOCK = 1 asks for torch's kernels on every block, however small
        if _TORCH_MIN_BLOCK > 1 and NUMPY_EXP:
            return
        least = _TORCH_PAIRS if _TORCH_MIN_BLOCK > 1 else 0
        if self._torch is _LAZY and pairs >= least:
            try:
                import torch

                self._torch = torch
            except ImportError:  # pragma: no cover - torch is in requirements.txt
                self._torch = None

    @property
    def torch(self) -> Any:
        """torch where loaded (None before `prepare` loads it, or without torch)."""
        return None if self._torch is _LAZY else self._torch

    def gemm32(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """a @ b.T in float32 into a per-thread buffer (OpenBLAS's sgemm: IEEE single
        precision, which the float32 margin assumes; torch's CPU matmul may be set to
        lower-precision modes)."""
        shape = (a.shape[0], b.shape[0])
        bufs = self._local.__dict__.setdefault("bufs32", {})
        out = bufs.get(shape)
        if out is None:
            out = bufs[shape] = np.empty(shape, dtype=np.float32)
        return np.matmul(a, b.T, out=out)

    def put(self, a: np.ndarray) -> np.ndarray:
        return a

    def gemm(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """a @ b.T into a per-thread buffer of that shape (saves an allocation and its
        page faults per block); the caller is done with a block before the next."""
        t = self.torch
        shape = (a.shape[0], b.shape[0])
        bufs = self._local.__dict__.setdefault("bufs", {})
        out = bufs.get(shape)
        if t is None or a.shape[0] * b.shape[0] < _TORCH_MIN_BLOCK:
            if out is None:
                out = bufs[shape] = np.empty(shape)
            return np.matmul(a, b.T, out=out)
        if out is None:
            out = bufs[shape] = t.empty(shape, dtype=t.float64).numpy()
        t.mm(t.from_numpy(a), t.from_numpy(b).T, out=t.from_numpy(out))
        return out

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
        np.sqrt(s, out=s)  # numpy's float64 sqrt is vectorised (torch's was slower here)
        if self.torch is not None and s.size >= _TORCH_MIN_BLOCK:
            return float(self.torch.from_numpy(s).neg_().exp_().sum())  # SLEEF's exp
        np.negative(s, out=s)
        np.exp(s, out=s)
        return float(s.sum())

    def _one_thread(self) -> None:
        """Worker-thread initializer: torch's OpenMP thread count belongs to each calling
        thread, so a pool thread would otherwise start a team of all cores per block (their
        spin-waits tripled the CPU time of the ε pass on 2 cores)."""
        if self.torch is not None:
            self.torch.set_num_threads(1)

    def run(self, tasks: list[Callable[[], Any]], stage: str = "") -> list[Any]:
        """Run row-block tasks; BLAS and torch are held to one thread each (their own
        threads on these small blocks only fight ours and run many times slower).
        torch's thread count is restored when the tasks end."""
        from threadpoolctl import threadpool_limits

        if len(tasks) <= 1:  # one small block: not worth threadpoolctl's ~1 ms
            return _serial(tasks, stage, self.progress)
        torch = self.torch
        torch_threads = torch.get_num_threads() if torch is not None else 0
        try:
            if torch is not None:
                torch.set_num_threads(1)
            with threadpool_limits(1, user_api="blas"):
                if self.n_jobs <= 1:
                    return _serial(tasks, stage, self.progress)
                with ThreadPoolExecutor(self.n_jobs, initializer=self._one_thread) as pool:
                    done = pool.map(lambda t: t(), tasks)
                    return _report(done, len(tasks), stage, self.progress)
        finally:
            if torch is not None:
                torch.set_num_threads(torch_threads)


class NumbaOps(NumpyOps):
    """NumpyOps whose minority × majority pass is one compiled kernel (`fused`: distance,
    ε count, sqrt, exp and sum per pair in registers, rows in parallel on `n_jobs`
    threads) and whose minority passes run their row blocks in another (`fused_minority`,
    in the thread pool). Small passes stay numpy's: numba's import and cached code cost
    about 0.4 s, its first compile on a machine several."""

    def fused_cross(
        self,
        X: np.ndarray,
        rows_idx: np.ndarray,
        cols_idx: np.ndarray,
        eps: float | None,
        proximity: bool,
    ) -> tuple[np.ndarray | None, float] | None:
        """The cross pass's (counts, Σ exp(−distance)) from the kernel, or None below
        `_NUMBA_PAIRS` pairs (the caller then runs numpy's blocks)."""
        if len(rows_idx) * len(cols_idx) < _NUMBA_PAIRS:
            return None
        from .fused import cross_counts_and_sums

        return cross_counts_and_sums(
            X, rows_idx, cols_idx, eps, proximity, self.n_jobs, self.progress
        )

    def fused_triangle(self, op: Any, m: int) -> Any:
        """The compiled row-block kernel of the minority passes over these operands, or
        None below `_NUMBA_PAIRS` pairs (numpy's blocks then)."""
        if m * (m - 1) // 2 < _NUMBA_PAIRS:
            return None
        from .fused_minority import Triangle

        if op.single:
            return Triangle(op.A32, op.B32, op.A64, op.B64)
        return Triangle(op.A64, op.B64, op.A64, op.B64)


def numba_available() -> bool:
    """Whether numba is installed (looked up without importing it)."""
    import importlib.util

    return importlib.util.find_spec("numba") is not None


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
    """Blocks as torch tensors on `device` (a GPU when one is present), float64 throughout:
    a GPU's float32 products may run in TF32, which no float32 margin covers."""

    single = False
    on_device = True  # the passes' rechecks run on the device (`device_passes`)

    def __init__(
        self,
        device: str | None = None,
        block_rows: int | None = None,
        block_cols: int | None = None,
    ):
        import torch

        self.torch = torch
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        if self.device.type == "cuda" and not torch.cuda.is_available():
            raise SegregationInputError(
                f"device {device!r} is not available: torch sees no GPU here (leave out "
                "--device, or use backend 'numba' or 'numpy')"
            )
        gpu = self.device.type != "cpu"
        self.block_rows = block_rows or (4096 if gpu else 512)
        self.block_cols = block_cols or (16384 if gpu else 4096)
        self.progress: Progress | None = None
        self.canonical_chunk = 1 << 22 if gpu else 1 << 18  # pairs per device recheck

    def prepare(self, pairs: int) -> None:
        """Nothing to load: torch is imported already."""

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


def gpu_available() -> bool:
    """Whether torch is installed and sees a CUDA (or ROCm) device; without a GPU driver
    on the machine it answers without importing torch (seconds)."""
    if not any(os.path.exists(p) for p in ("/dev/nvidiactl", "/proc/driver/nvidia", "/dev/kfd")):
        return False
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is in requirements.txt
        return False
    return bool(torch.cuda.is_available())


def make_ops(backend: str = "numpy", device: str | None = None, n_jobs: int | None = None) -> Any:
    """`auto`: torch on the GPU when one is present, else the numba kernel on the CPU cores
    where numba is installed, else numpy blocks."""
    if backend == "auto":
        if device not in (None, "cpu") or (device is None and gpu_available()):
            return TorchOps(device=device)
        backend = "numba" if numba_available() else "numpy"
    if backend in ("numpy", "numba"):
        if device not in (None, "cpu"):
            raise SegregationInputError(
                f"the {backend} backend runs on the CPU; use backend='torch'"
            )
        if backend == "numba" and not numba_available():
            raise SegregationInputError(
                "backend 'numba' needs the numba package (pip install numba); use backend='numpy'"
            )
        return (NumbaOps if backend == "numba" else NumpyOps)(n_jobs=n_jobs)
    if backend == "torch":
        return TorchOps(device=device)
    raise SegregationInputError(
        f"unknown backend {backend!r}; expected 'numpy', 'numba', 'torch' or 'auto'"
    )


def triangle_mask(ops: Any, s: Any, r0: int, c0: int) -> None:
    """Exclude pairs with column index <= row index (the lower triangle and the diagonal).

    NaN, not inf: every comparison with NaN is false, even `<= inf` (an open bracket).
    """
    rows, cols = s.shape
    if c0 >= r0 + rows:
        return
    ops.set_where(s, ops.upper_excluded(rows, cols, r0, c0), math.nan)
