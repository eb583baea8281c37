"""`analysis.grid.map_cells` in this process and its refusals (the cluster paths are in
tests/analysis/experiment/test_grid_experiment.py, with real Dask processes)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest

from analysis.grid import CellError, GridError, map_cells
from tests.run_cli import ROOT


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Recording:
    """A cell function that remembers the cells it was called with."""

    def __init__(self) -> None:
        self.seen: list = []

    def __call__(self, cell: int) -> int:
        self.seen.append(cell)
        if cell < 0:
            raise ValueError(f"negative: {cell}")
        return cell * 10


def test_serial_keeps_order_and_reports_progress():
    fn, ticks = Recording(), []
    got = map_cells(fn, iter([3, 1, 2]), progress=lambda done, total: ticks.append((done, total)))
    assert got == [30, 10, 20]
    assert ticks == [(1, 3), (2, 3), (3, 3)]
    assert map_cells(fn, [], workers=1) == []


def test_serial_failure_names_the_cell():
    fn = Recording()
    with pytest.raises(CellError, match=r"cell 2 of 3 \(-4\) failed: ValueError: negative: -4"):
        map_cells(fn, [1, -4, 5])
    assert fn.seen == [1, -4]  # stopped at the failure


def test_the_serial_path_does_not_import_dask():
    code = (
        "import sys; from analysis.grid import map_cells; "
        "assert map_cells(abs, [-2, 3], workers=1) == [2, 3]; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1:8786",  # no scheme
        "http://127.0.0.1:8786",
        "tcp://127.0.0.1",  # no port
        "tcp://127.0.0.1:0",
        "tcp://127.0.0.1:70000",
        "tcp://:8786",
        "tcp://a b:8786",
        "",
    ],
)
def test_a_malformed_scheduler_address_is_refused_before_any_cell(address):
    fn = Recording()
    with pytest.raises(GridError, match=r"expected tcp://HOST:PORT"):
        map_cells(fn, [1], scheduler=address)
    assert fn.seen == []


@pytest.mark.parametrize("workers", [0, -2, True, 1.5, "2"])
def test_a_bad_worker_count_is_refused(workers):
    fn = Recording()
    with pytest.raises(GridError, match="workers must be a whole number of at least 1"):
        map_cells(fn, [1], workers=workers)
    assert fn.seen == []


def test_workers_and_a_scheduler_together_are_refused():
    fn = Recording()
    with pytest.raises(GridError, match="not both"):
        map_cells(fn, [1], scheduler="tcp://127.0.0.1:8786", workers=2)
    assert fn.seen == []


def test_an_unreachable_scheduler_is_refused_within_the_timeout():
    fn, address = Recording(), f"tcp://127.0.0.1:{_free_port()}"  # nothing listens there
    t0 = time.monotonic()
    with pytest.raises(GridError, match=f"cannot reach the Dask scheduler at {address} within 1 s"):
        map_cells(fn, [1], scheduler=address, connect_timeout=1)
    assert time.monotonic() - t0 < 20
    assert fn.seen == []
