"""Time from profile submit to recourses ready, over simulated participants.

For each backend — the embedded default (SQLite + SQLite-backed Celery broker) and
PostgreSQL + Redis — this starts the real stack (gunicorn + one Celery worker process,
`--pool=solo`), loads the demo car-loan study (3,683-profile synthetic pool), walks N bot
participants through the HTTP flow (`simulate_participants --url`; one after another, or
`--parallel K` bot processes at once) and
reads each participant's `recourses_seconds` from the export: the time from the profile
being stored (and the task queued at commit) to the recourses being stored by the worker.
It also prints the median time a bot spent on the waiting page (polling every 0.1 s).

    .venv/bin/python benchmarks/bench_study_flow.py --n 50 [--parallel 4]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.cli import OneLineParser  # noqa: E402 - after the path is set
from tests.integration.stack import (  # noqa: E402 - after the path is set
    embedded_env,
    manage,
    postgres_redis_env,
    prepare,
    running,
)

BACKENDS = ("embedded", "postgres")


def _args(argv: list[str] | None) -> argparse.Namespace:
    p = OneLineParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=50, help="participants per backend (1..1000)")
    p.add_argument("--backends", default=",".join(BACKENDS), help="embedded,postgres")
    p.add_argument("--pool-size", type=int, default=3683)
    p.add_argument(
        "--parallel", type=int, default=1, help="bot processes walking at the same time (1..16)"
    )
    p.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    p.add_argument("--redis", default="redis://127.0.0.1:6379")
    a = p.parse_args(argv)
    backends = [b.strip() for b in a.backends.split(",") if b.strip()]
    bad = [b for b in backends if b not in BACKENDS]
    if bad or not backends:
        p.error(
            f"--backends: unknown {', '.join(bad) or '(none)'}; choose from {', '.join(BACKENDS)}"
        )
    if not 1 <= a.n <= 1000:
        p.error(f"--n must be 1..1000, got {a.n}")
    if not 1 <= a.parallel <= 16:
        p.error(f"--parallel must be 1..16, got {a.parallel}")
    if not 10 <= a.pool_size <= 200_000:
        p.error(f"--pool-size must be 10..200000, got {a.pool_size}")
    a.backend_list = backends
    return a


def _simulate(env: dict[str, str], url: str, n: int, parallel: int) -> str:
    """`parallel` bot processes at once, each walking its share of the n participants."""
    shares = [n // parallel + (1 if i < n % parallel else 0) for i in range(parallel)]
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "manage.py",
                "simulate_participants",
                "carloan",
                "--n",
                str(k),
                "--seed",
                str(i),
                "--url",
                url,
                "--timeout",
                "120",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for i, k in enumerate(shares)
        if k > 0
    ]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=3600)
        if p.returncode != 0:
            raise RuntimeError(f"simulate_participants failed ({p.returncode}): {err.strip()}")
        outs.append(out)
    return "\n".join(outs)


def _measure(
    env: dict[str, str], work: Path, n: int, pool_size: int, parallel: int
) -> dict[str, Any]:
    prepare(env, pool_size=pool_size)
    with running(env, work) as url:
        out = _simulate(env, url, n, parallel)
    manage(env, "export_study", "carloan", "--out", str(work / "export"), "--with-test")  # bots
    pa = pd.read_csv(work / "export" / "participants.csv").sort_values("participant")
    secs = pa["recourses_seconds"].dropna().to_numpy(dtype=float)
    outcomes = pa["outcome"].value_counts().to_dict()
    waits = [float(w) for w in re.findall(r"median wait on the waiting page ([0-9.]+)s", out)]
    return {
        "participants": float(len(secs)),
        "completed": float((pa["outcome"] == "completed").sum()),
        "median": float(np.median(secs)),
        "p95": float(np.percentile(secs, 95)),
        "max": float(secs.max()),
        "first": float(secs[0]),  # the worker's first task also parses and indexes the pool
        "rest_max": float(secs[1:].max()) if len(secs) > 1 else float("nan"),
        "outcomes": outcomes,
        "locked": sum(
            (work / log).read_text().count("database is locked")
            for log in ("worker.log", "web.log")
        ),
        # median of the bot processes' medians
        "page_wait_median": float(np.median(waits)) if waits else float("nan"),
    }


def _wait_text(seconds: float) -> str:
    # no median printed: no bot saw the waiting page (recourses were ready on arrival)
    return "none waited" if np.isnan(seconds) else f"{seconds:.2f}"


def main(argv: list[str] | None = None) -> int:
    a = _args(argv)
    print(
        f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
        f"n={a.n}, parallel={a.parallel}"
    )
    rows = []
    for backend in a.backend_list:
        with tempfile.TemporaryDirectory(prefix=f"bench-{backend}-") as tmp:
            work = Path(tmp)
            if backend == "embedded":
                res = _measure(embedded_env(work), work, a.n, a.pool_size, a.parallel)
            else:
                with postgres_redis_env(work, a.pg, a.redis) as env:
                    res = _measure(env, work, a.n, a.pool_size, a.parallel)
        rows.append((backend, res))
    print(f"load average after:  {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print()
    at_once = "one participant at a time" if a.parallel == 1 else f"{a.parallel} at a time"
    print(f"profile submit -> recourses stored (seconds), {at_once}")
    print(f"{'backend':<10} {'n':>4} {'completed':>9} {'median':>8} {'p95':>8} {'max':>8} "
          f"{'waiting page (median)':>22}")  # fmt: skip
    for backend, r in rows:
        print(
            f"{backend:<10} {r['participants']:>4.0f} {r['completed']:>9.0f} {r['median']:>8.3f} "
            f"{r['p95']:>8.3f} {r['max']:>8.3f} {_wait_text(r['page_wait_median']):>22}"
        )
    print()
    for backend, r in rows:
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(r["outcomes"].items()))
        print(
            f"{backend}: first participant (cold pool cache) {r['first']:.3f}s, "
            f"max of the others {r['rest_max']:.3f}s; outcomes: {outcomes}; "
            f"'database is locked' in the logs: {r['locked']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
