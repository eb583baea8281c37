"""oTree for the capacity benchmark's stress comparison: the oTree project in
`benchmarks/otree_app`, copied to a temp folder, with a session of N participants, served
by `otree prodserver` (one process, as oTree recommends) on 127.0.0.1 from oTree's own
virtual environment (never this project's: its pins differ), on oTree's default database,
SQLite. Walked by `otree_walk.py` with this project's load generator."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks.load_common import measured_run
from tests.integration.cluster import free_port, port_open
from tests.integration.stack import ROOT, _wait_for

APP = ROOT / "benchmarks" / "otree_app"


def otree_missing(python: str) -> str:
    """'' when `python` has oTree and its `otree` command beside it, else why not."""
    if not python:
        return "no --otree-python given (an interpreter of a virtual environment with otree)"
    exe = Path(python).parent / "otree"
    if not Path(python).exists():
        return f"{python} does not exist"
    if not exe.exists():
        return f"no otree command beside {python}"
    r = subprocess.run([python, "-c", "import otree; print(otree.__version__)"],
                       capture_output=True, text=True, timeout=60)  # fmt: skip
    if r.returncode != 0:
        return f"{python} cannot import otree: {r.stderr.strip()[-300:]}"
    return ""


def otree_version(python: str) -> str:
    r = subprocess.run([python, "-c", "import otree; print(otree.__version__)"],
                       capture_output=True, text=True, timeout=60)  # fmt: skip
    return r.stdout.strip()


def _env(python: str) -> dict[str, str]:
    bin_dir = str(Path(python).parent)
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "VIRTUAL_ENV")}
    # prodserver starts `otree timeoutsubprocess` by name: its own environment's first
    env.update(PATH=f"{bin_dir}:{env.get('PATH', '')}", OTREE_PRODUCTION="1",
               OTREE_ADMIN_PASSWORD=os.urandom(12).hex(), PYTHONDONTWRITEBYTECODE="1")  # fmt: skip
    env.pop("OTREE_AUTH_LEVEL", None)
    return env


@contextmanager
def otree_server(python: str, work: Path, n: int) -> Iterator[dict[str, Any]]:
    """A session of `n` participants served on a free port; stopped (its process group)
    afterwards. Yields ``url``, ``join`` (the session-wide link's code) and ``db``."""
    project = work / "otree_project"
    shutil.copytree(APP, project)
    env = _env(python)
    exe = str(Path(python).parent / "otree")
    r = subprocess.run([exe, "create_session", "recourse", str(n)], cwd=project, env=env,
                       capture_output=True, text=True, timeout=300)  # fmt: skip
    if r.returncode != 0:
        raise RuntimeError(f"otree create_session failed: {r.stdout}{r.stderr}")
    db = project / "db.sqlite3"
    with sqlite3.connect(db) as conn:
        join = conn.execute("SELECT _anonymous_code FROM otree_session").fetchone()[0]
    port = free_port()
    with open(work / "otree.log", "w") as log:
        proc = subprocess.Popen([exe, "prodserver", f"127.0.0.1:{port}"], cwd=project, env=env,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
    try:
        _wait_for(lambda: port_open("127.0.0.1", port), "otree prodserver", 60, [proc])
        yield {"url": f"http://127.0.0.1:{port}", "join": join, "db": db}
    finally:
        # the server and the timeout process it started: its whole group
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def run_otree(python: str, work: Path, n: int, think: str, ramp: float | None,
              time_limit: float) -> dict[str, Any]:  # fmt: skip
    """One oTree run of `n` participants with `think`: the walk's figures, the check of
    oTree's database, the server's CPU and the load average, as bench_load reports them."""
    from tests.integration.stack import embedded_env

    (work / "walker").mkdir(exist_ok=True)
    walker_env = embedded_env(work / "walker")  # Django, for the load generator's imports
    with otree_server(python, work, n) as srv:
        out = work / f"otree-{n}.json"
        cmd = [
            sys.executable, str(ROOT / "benchmarks" / "otree_walk.py"), "--url", srv["url"],
            "--join", srv["join"], "--db", str(srv["db"]), "--n", str(n), "--think", think,
            "--time-limit", str(time_limit), "--report", str(out),
            *(["--ramp", str(ramp)] if ramp is not None else []),
        ]  # fmt: skip
        figures = measured_run(cmd, walker_env, ROOT, out, time_limit + 120, "otree prodserver")
    return {"n": n, "think": think, **figures}
