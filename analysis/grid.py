"""Grids of independent cells (experiment runs, power replicates) run in order here, on a
`distributed.LocalCluster` of worker processes on this machine, or on an existing Dask
cluster (`tcp://HOST:PORT`, Dask's own `dask scheduler` / `dask worker`: docs/deploy.md).

Why Dask: it is the existing engine for this (a scheduler, workers, their commands, retries
of lost workers), so the project adds no runner of its own. Results come back in the order
of the cells whatever order they finished in, and a cell's numbers depend only on the cell
(the caller puts a seed in each), so a grid gives the same results wherever each cell ran.

The serial path (no scheduler, `workers` None or 1) does not import Dask, so a plain run
pays nothing for it. Bad input (an address that is not `tcp://HOST:PORT`, a scheduler that
cannot be reached in `connect_timeout` seconds or has no workers, `workers` below 1) raises
`GridError` (a ValueError) before any cell runs; a failed cell raises `CellError`, which
names the cell, and the cells still queued are cancelled.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from typing import Any

__all__ = [
    "CONNECT_TIMEOUT_S",
    "CellError",
    "GridError",
    "check_scheduler",
    "check_workers",
    "map_cells",
    "tqdm_progress",
]

#: seconds to reach a scheduler (and to see one of its workers) before giving up
CONNECT_TIMEOUT_S = 10.0

#: `tcp://HOST:PORT`: a host name, an IPv4 address or a bracketed IPv6 address, and a port
_ADDRESS = re.compile(r"tcp://(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.-]*):(?P<port>\d+)")

#: progress(done, total): called after each finished cell
Progress = Callable[[int, int], None]


class GridError(ValueError):
    """The grid cannot run as asked (bad address, unreachable scheduler, bad worker count)."""


class CellError(RuntimeError):
    """A cell raised: the message names the cell (its position and its text)."""

    def __init__(self, index: int, total: int, cell: Any, exc: BaseException) -> None:
        self.index, self.cell = index, cell
        text = str(cell)
        if len(text) > 200:
            text = text[:197] + "..."
        super().__init__(
            f"cell {index + 1} of {total} ({text}) failed: {type(exc).__name__}: {exc}"
        )


def check_scheduler(address: str) -> str:
    """A scheduler address as given, when it reads `tcp://HOST:PORT` (port 1-65535)."""
    m = _ADDRESS.fullmatch(address.strip()) if isinstance(address, str) else None
    if m is None or not 1 <= int(m["port"]) <= 65535:
        raise GridError(
            f"scheduler address {address!r}: expected tcp://HOST:PORT "
            "(e.g. tcp://127.0.0.1:8786, what `dask scheduler` prints)"
        )
    return address.strip()


def check_workers(workers: int | None) -> int | None:
    """A worker count of 1 or more (None: none asked)."""
    if workers is None:
        return None
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise GridError(f"workers must be a whole number of at least 1, got {workers!r}")
    return workers


def map_cells(
    fn: Callable[[Any], Any],
    cells: Iterable[Any],
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    progress: Progress | None = None,
    connect_timeout: float | None = None,
) -> list:
    """`[fn(cell) for cell in cells]`: in this process (no scheduler, `workers` None or 1),
    on a LocalCluster of `workers` processes (one thread each), or on the cluster whose
    scheduler is at `scheduler`. `fn` and the cells must pickle, and on a cluster `fn`'s
    module must be importable by the workers. `progress(done, total)` is called as cells
    finish, in the order they finish. `connect_timeout`: seconds to reach the scheduler
    (default `CONNECT_TIMEOUT_S`)."""
    items = list(cells)
    workers = check_workers(workers)
    if scheduler is not None:
        scheduler = check_scheduler(scheduler)
        if workers is not None:
            raise GridError(
                "give workers or a scheduler, not both: a scheduler's cluster has its own workers"
            )
    if connect_timeout is None:
        connect_timeout = CONNECT_TIMEOUT_S
    if not connect_timeout > 0:
        raise GridError(f"connect_timeout must be above 0 seconds, got {connect_timeout!r}")
    if scheduler is None and (workers is None or workers == 1):
        return _serial(fn, items, progress)
    return _on_dask(fn, items, scheduler, workers, progress, connect_timeout)


def _serial(fn: Callable[[Any], Any], items: list, progress: Progress | None) -> list:
    out = []
    for i, cell in enumerate(items):
        try:
            out.append(fn(cell))
        except Exception as exc:
            raise CellError(i, len(items), cell, exc) from exc
        if progress is not None:
            progress(i + 1, len(items))
    return out


def _on_dask(
    fn: Callable[[Any], Any],
    items: list,
    scheduler: str | None,
    workers: int | None,
    progress: Progress | None,
    timeout: float,
) -> list:
    from distributed import Client, LocalCluster, as_completed

    with ExitStack() as stack:
        if scheduler is not None:
            try:
                client = Client(scheduler, timeout=timeout, set_as_default=False)
            except (OSError, TimeoutError) as exc:
                raise GridError(
                    f"cannot reach the Dask scheduler at {scheduler} within {timeout:g} s: {exc}"
                ) from None
            stack.enter_context(client)
            try:
                client.wait_for_workers(1, timeout=timeout)
            except (OSError, TimeoutError):
                raise GridError(
                    f"the Dask scheduler at {scheduler} has no workers (waited {timeout:g} s); "
                    "start some with `dask worker " + scheduler + "`"
                ) from None
        else:
            cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=logging.ERROR,
            )
            stack.enter_context(cluster)
            client = stack.enter_context(Client(cluster, set_as_default=False))
        if not items:
            return []
        futures = client.map(fn, items, pure=False)  # keys unique to this call
        position = {f.key: i for i, f in enumerate(futures)}
        results: list[Any] = [None] * len(items)
        try:
            for done, fut in enumerate(as_completed(futures, loop=client.loop), start=1):
                i = position[fut.key]
                if fut.status == "error":
                    exc = fut.exception()
                    raise CellError(i, len(items), items[i], exc) from exc
                results[i] = fut.result()
                if progress is not None:
                    progress(done, len(items))
        finally:
            client.cancel(futures)
        return results


def tqdm_progress(desc: str, *, unit: str = "cell") -> Progress:
    """A progress callback drawing a tqdm bar on stderr (on a terminal only, as the
    commands' own bars), closed when the last cell is done."""
    from tqdm import tqdm

    bar: dict[str, Any] = {}

    def report(done: int, total: int) -> None:
        if "bar" not in bar:
            bar["bar"] = tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=None)
        b = bar["bar"]
        b.update(done - b.n)
        if done >= total:
            b.close()

    return report
