"""The experiment's cells on Dask (`analysis.grid`, `--workers`, `--scheduler`): the same
results.csv (and runs.csv, factuals.csv) as the serial run on a LocalCluster of 2 workers and
on a real `dask scheduler` with two `dask worker` processes; bad grid input refused with
nothing written.

The grid is the smallest that still spreads: 2 runs × 2 cheap methods (4 cells). The timing
metrics differ between any two runs of anything and are left out of the comparison."""

from __future__ import annotations

import json
import math
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from analysis.__main__ import main
from analysis.grid import CellError, map_cells
from tests.run_cli import ROOT

pytestmark = pytest.mark.slow

ARGS = ["experiment", "--methods", "gs,ebr", "--runs", "2", "--quiet"]
TIMING = ("fit_seconds", "cf_per_second", "wall_seconds")
COMPARED = ("results.csv", "runs.csv", "factuals.csv", "audits.csv", "split.csv")
DASK = Path(sys.executable).parent / "dask"


def lines(path: Path) -> list[str]:
    """The file's lines less the timing metrics' rows."""
    text = path.read_text().splitlines()
    return [line for line in text if not any(f",{t}," in line for t in TIMING)]


@pytest.fixture(scope="module")
def serial(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("grid") / "serial"
    assert main([*ARGS, "--out", str(out)]) == 0
    return out


def assert_same_files(a: Path, b: Path) -> None:
    for name in COMPARED:
        got, want = lines(b / name), lines(a / name)
        assert len(want) > 1 and got == want, name
    assert any(row.startswith("gs,centralization,") for row in lines(a / "results.csv"))


def test_a_local_cluster_of_two_workers_writes_the_serial_files(serial, tmp_path):
    out = tmp_path / "w2"
    assert main([*ARGS, "--workers", "2", "--out", str(out)]) == 0
    assert_same_files(serial, out)
    grid = json.loads((out / "settings.json").read_text())["grid"]
    assert grid == {"scheduler": None, "workers": 2, "cells": 4}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(procs: list[subprocess.Popen]) -> None:
    """SIGTERM to each process by its PID, then SIGKILL to any still there after 15 s."""
    for proc in procs:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=15)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A `dask scheduler` and two `dask worker` processes (no nanny: one process each) on
    127.0.0.1; stopped by PID afterwards."""
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    logs = tmp_path_factory.mktemp("dask-logs")
    procs: list[subprocess.Popen] = []
    files: list = []

    def start(name: str, *args: str) -> None:
        log = (logs / f"{name}.log").open("w")
        files.append(log)
        procs.append(
            subprocess.Popen([str(DASK), *args], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        )

    try:
        start("scheduler", "scheduler", "--host", "127.0.0.1", "--port", str(port),
              "--no-dashboard")  # fmt: skip
        for name in ("w1", "w2"):
            start(name, "worker", address, "--name", name, "--host", "127.0.0.1",
                  "--nthreads", "1", "--no-nanny", "--no-dashboard")  # fmt: skip
        from distributed import Client

        deadline = time.monotonic() + 120
        while True:  # the scheduler may not listen yet
            try:
                with Client(address, timeout=5, set_as_default=False) as client:
                    client.wait_for_workers(2, timeout=max(1, deadline - time.monotonic()))
                    pids = client.run(os.getpid)
                break
            except OSError:
                if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                    raise
                time.sleep(1)
        assert set(pids.values()) == {p.pid for p in procs[1:]}  # the two worker processes
        yield address
    finally:
        _stop(procs[1:])  # the workers, then the scheduler
        _stop(procs[:1])
        for log in files:
            log.close()


def test_the_experiment_through_a_scheduler_writes_the_serial_files(serial, cluster, tmp_path):
    out = tmp_path / "cluster"
    assert main([*ARGS, "--scheduler", cluster, "--out", str(out)]) == 0
    assert_same_files(serial, out)


def test_cells_on_the_cluster_come_back_in_order_with_progress(cluster):
    ticks: list[tuple[int, int]] = []
    got = map_cells(
        math.sqrt, [16.0, 9.0, 4.0], scheduler=cluster, progress=lambda *t: ticks.append(t)
    )
    assert got == [4.0, 3.0, 2.0]
    assert sorted(ticks) == [(1, 3), (2, 3), (3, 3)]
    with pytest.raises(CellError, match=r"cell 2 of 3 \(-1.0\) failed: ValueError"):
        map_cells(math.sqrt, [4.0, -1.0, 9.0], scheduler=cluster)


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--scheduler", "127.0.0.1:8786"], "expected tcp://HOST:PORT"),
        (["--scheduler", "tcp://127.0.0.1:{free}"], "cannot reach the Dask scheduler"),
        (["--workers", "2", "--scheduler", "tcp://127.0.0.1:8786"], "give one"),
    ],
)
def test_bad_grid_input_is_refused_and_nothing_written(
    extra, message, tmp_path, capsys, monkeypatch
):
    monkeypatch.setattr("analysis.grid.CONNECT_TIMEOUT_S", 1.0)
    out = tmp_path / "never"
    extra = [a.replace("{free}", str(_free_port())) for a in extra]
    assert main([*ARGS, "--out", str(out), *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
    assert not out.exists()


def test_zero_workers_is_refused_and_nothing_written(tmp_path, capsys):
    out = tmp_path / "never"
    with pytest.raises(SystemExit) as exc:
        main([*ARGS, "--out", str(out), "--workers", "0"])
    assert exc.value.code == 2
    assert "--workers: must be at least 1" in capsys.readouterr().err
    assert not out.exists()
