"""A fixed number of threads for the numeric libraries while the experiment runs.

Why: scikit-learn's K-Means and the MLP run on OpenMP / BLAS threads and the VAE methods on
torch's. On a machine whose cores are shared with other processes those threads spin at
their barriers while a peer thread waits for a core, and a run slows down many times over
(measured on this project's 2 cores under load: an IBR fit 32× slower, a 10-start K-Means
14× slower with two threads than with one). One thread per library avoids that, and it
makes a run's numbers independent of how many cores the machine has: with more threads
K-Means sums its centres in another order (differences of about 1e-15 in the centres).

`reproduce --threads N` sets it (default 1) and records it in each setting's
`settings.json`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def thread_limit(threads: int | None) -> Iterator[None]:
    """BLAS, OpenMP and torch limited to `threads` inside the block (None: unchanged)."""
    if threads is None:
        yield
        return
    if threads < 1:
        raise ValueError(f"threads must be at least 1, got {threads}")
    import torch
    from threadpoolctl import threadpool_limits

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        with threadpool_limits(limits=threads):
            yield
    finally:
        torch.set_num_threads(before)
