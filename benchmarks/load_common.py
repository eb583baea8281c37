"""What the load benchmarks (bench_load, bench_capacity) share: the stack of each backend,
the server's CPU from /proc, the load average, list options."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks.cli import OneLineParser

BACKENDS = ("embedded", "postgres")
#: the worker as each backend's deployment runs it (`scripts/run`, `docker-compose.yml`)
WORKER_ARGS = {"embedded": ("--pool=solo",), "postgres": ("--concurrency", "2")}
#: the host-sized gunicorn settings
WEB_ARGS = ("-c", "python:studyapp.config.gunicorn")


def loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def choices(p: OneLineParser, flag: str, text: str, allowed: tuple[str, ...]) -> list[str]:
    """A comma-separated option's items, each one of `allowed`."""
    chosen = [x.strip() for x in text.split(",") if x.strip()]
    bad = [x for x in chosen if x not in allowed]
    if bad or not chosen:
        p.error(f"{flag}: unknown {', '.join(bad) or '(none)'}; choose from {', '.join(allowed)}")
    return chosen


def whole_numbers(p: OneLineParser, flag: str, text: str, lo: int, hi: int) -> list[int]:
    """A comma-separated option's whole numbers, each in lo..hi."""
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        p.error(f"{flag} must be whole numbers separated by commas, got {text!r}")
    if not values or any(not lo <= v <= hi for v in values):
        p.error(f"{flag}: each must be {lo}..{hi}, got {text!r}")
    return values


def session_cpu_s(session_ids: set[int]) -> float:
    """CPU seconds (user + system) of the live processes in the given sessions."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) in session_ids:  # field 6 of stat: the session id
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / tick


def server_sessions() -> set[int]:
    """The sessions of the server processes this process started (gunicorn, worker, a
    balancer): children of this process that each lead a session of their own."""
    mine = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(stat.parent.name)
        if int(fields[1]) == os.getpid() and int(fields[3]) == pid:  # ppid, session id
            mine.add(pid)
    return mine


@contextmanager
def backend_env(backend: str, work: Path, pg: str, redis: str) -> Iterator[dict[str, str]]:
    """The environment of a backend's stack, on a database of its own (removed afterwards)."""
    from tests.integration.stack import embedded_env, postgres_redis_env

    if backend == "embedded":
        yield embedded_env(work)
    else:
        with postgres_redis_env(work, pg, redis) as env:
            yield env


def measured_run(
    cmd: Sequence[str], env: dict[str, str], cwd: Path, report: Path, timeout: float, what: str
) -> dict[str, Any]:
    """Run a load generator (`cmd`, which writes its figures as JSON to `report`) against
    the servers this process started; add their CPU (from /proc) and the load average
    before and after. A generator that wrote nothing gives ``{"failed": why}``."""
    sessions = server_sessions()
    load_before, cpu_before = loadavg(), session_cpu_s(sessions)
    t0 = time.monotonic()
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    wall = time.monotonic() - t0
    server_cpu = session_cpu_s(sessions) - cpu_before
    print(r.stdout.rstrip())
    if r.returncode not in (0, 1) or not report.exists():
        print(r.stderr.rstrip()[-3000:])
        return {"failed": f"{Path(cmd[1]).name} exited {r.returncode}"}
    figures = json.loads(report.read_text())
    figures.update(
        load_before=load_before,
        load_after=loadavg(),
        server_cpu_s=server_cpu,
        server_cpu_share=server_cpu / wall,
    )
    print(
        f"server CPU ({what}) {server_cpu:.1f} s over {wall:.1f} s "
        f"({100 * server_cpu / wall:.0f}% of one core); load average before {load_before}, "
        f"after {figures['load_after']}"
    )
    return figures
