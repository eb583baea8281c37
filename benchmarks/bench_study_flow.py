"""Time from profile submit to recourses ready, over simulated participants.

For each backend — the embedded default (SQLite + SQLite-backed Celery broker) and
PostgreSQL + Redis — this starts the real stack (gunicorn + one Celery worker process,
`--pool=solo`), loads the demo car-loan study (3,683-profile synthetic pool), walks N bot
participants through the HTTP flow one after another (`simulate_participants --url`) and
reads each participant's `recourses_seconds` from the export: the time from the profile
being stored (and the task queued at commit) to the recourses being stored by the worker.
It also prints the median time a bot spent on the waiting page (polling every 0.1 s).

    .venv/bin/python benchmarks/bench_study_flow.py --n 50
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.integration.stack import (  # noqa: E402 - after the path is set
    embedded_env,
    manage,
    postgres_redis_env,
    prepare,
    running,
)

BACKENDS = ("embedded", "postgres")


def _args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=50, help="participants per backend (1..1000)")
    p.add_argument("--backends", default=",".join(BACKENDS), help="embedded,postgres")
    p.add_argument("--pool-size", type=int, default=3683)
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
    if not 10 <= a.pool_size <= 200_000:
        p.error(f"--pool-size must be 10..200000, got {a.pool_size}")
    a.backend_list = backends
    return a


def _measure(env: dict[str, str], work: Path, n: int, pool_size: int) -> dict[str, Any]:
    prepare(env, pool_size=pool_size)
    with running(env, work) as url:
        out = manage(env, "simulate_participants", "carloan", "--n", str(n), "--url", url,
                     "--timeout", "120", timeout=3600)  # fmt: skip
    manage(env, "export_study", "carloan", "--out", str(work / "export"))
    pa = pd.read_csv(work / "export" / "participants.csv").sort_values("participant")
    secs = pa["recourses_seconds"].dropna().to_numpy(dtype=float)
    outcomes = pa["outcome"].value_counts().to_dict()
    wait = re.search(r"median wait on the waiting page ([0-9.]+)s", out)
    return {
        "participants": float(len(secs)),
        "completed": float((pa["outcome"] == "completed").sum()),
        "median": float(np.median(secs)),
        "p95": float(np.percentile(secs, 95)),
        "max": float(secs.max()),
        "first": float(secs[0]),  # the worker's first task also parses and indexes the pool
        "rest_max": float(secs[1:].max()) if len(secs) > 1 else float("nan"),
        "outcomes": outcomes,
        "page_wait_median": float(wait.group(1)) if wait else float("nan"),
    }


def main(argv: list[str] | None = None) -> int:
    a = _args(argv)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; n={a.n}")
    rows = []
    for backend in a.backend_list:
        with tempfile.TemporaryDirectory(prefix=f"bench-{backend}-") as tmp:
            work = Path(tmp)
            if backend == "embedded":
                res = _measure(embedded_env(work), work, a.n, a.pool_size)
            else:
                with postgres_redis_env(work, a.pg, a.redis) as env:
                    res = _measure(env, work, a.n, a.pool_size)
        rows.append((backend, res))
    print(f"load average after:  {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print()
    print("profile submit -> recourses stored (seconds), one participant at a time")
    print(f"{'backend':<10} {'n':>4} {'completed':>9} {'median':>8} {'p95':>8} {'max':>8} "
          f"{'waiting page (median)':>22}")  # fmt: skip
    for backend, r in rows:
        print(
            f"{backend:<10} {r['participants']:>4.0f} {r['completed']:>9.0f} {r['median']:>8.3f} "
            f"{r['p95']:>8.3f} {r['max']:>8.3f} {r['page_wait_median']:>22.2f}"
        )
    print()
    for backend, r in rows:
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(r["outcomes"].items()))
        print(
            f"{backend}: first participant (cold pool cache) {r['first']:.3f}s, "
            f"max of the others {r['rest_max']:.3f}s; outcomes: {outcomes}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
