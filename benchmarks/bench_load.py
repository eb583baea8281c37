"""Page latency under concurrent participants, on the real stack, with a database check.

For each backend it starts the stack itself, on a database of its own that it removes
afterwards, and serves it with the host-sized gunicorn settings
(`-c python:studyapp.config.gunicorn`):

* embedded: SQLite + the SQLite-backed Celery broker in a temporary folder, one solo
  Celery worker (as `scripts/run` does);
* postgres: a throwaway PostgreSQL database + Redis (its own queue name), a Celery worker
  with two processes (as `docker-compose.yml` does).

It loads the demo car-loan study, then for each N walks N simulated participants at once
through the real pages over HTTP (`simulate_participants --concurrency N --verify`): with
a think time (default 1-3 s before each submit) and with none. It prints per page type the
p50/p95/p99 latency in ms, requests/s, errors, the database check (every participant at
the end page they saw, every rating stored as sent, no duplicates), the generator's own CPU, the
server's CPU (gunicorn + worker, from /proc) and the load average before and after each run.
All traffic goes to 127.0.0.1; it stops only the processes it started.

    .venv/bin/python benchmarks/bench_load.py                      # N=500, both backends
    .venv/bin/python benchmarks/bench_load.py --n 50,200 --backends postgres --scenarios think
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.cli import OneLineParser  # noqa: E402 - after the path is set
from benchmarks.load_common import (  # noqa: E402 - after the path is set
    BACKENDS,
    WEB_ARGS,
    WORKER_ARGS,
    backend_env,
    choices,
    loadavg,
    measured_run,
)
from tests.integration.stack import prepare, running  # noqa: E402 - after the path is set

SCENARIOS = ("think", "zero")


def _args(argv: list[str] | None) -> argparse.Namespace:
    p = OneLineParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Keep the machine quiet while it runs and compare figures only at a similar "
        "load average. The default (N=500, both scenarios, both backends) is four runs of "
        "10,000-14,000 requests each; on the shared 2-core machine at a load average of 8-14 "
        "it took 15 minutes, less on a quiet one. Exit status 1 when any run had an error, "
        "a stopped participant or a verification problem.",
    )
    p.add_argument(
        "--n",
        default="500",
        help="participants at once, comma-separated, each 1..1000 (default 500; e.g. 50,200,500)",
    )
    p.add_argument("--backends", default=",".join(BACKENDS), help="embedded,postgres")
    p.add_argument(
        "--scenarios",
        default=",".join(SCENARIOS),
        help="think (seconds from --think before each submit), zero (no think time)",
    )
    p.add_argument("--think", default="1,3", help="MIN,MAX seconds for the think scenario")
    p.add_argument(
        "--ramp",
        type=float,
        default=None,
        help="seconds over which the N participants arrive, evenly (0..600; default: the "
        "longest think time, i.e. all N within the first few seconds)",
    )
    p.add_argument("--pool-size", type=int, default=3683, help="demo pool rows (10..200000)")
    p.add_argument(
        "--time-limit", type=float, default=600.0, help="seconds per run at most (10..1800)"
    )
    p.add_argument(
        "--pg",
        default="postgres://postgres@127.0.0.1:5432",
        help="PostgreSQL server (a database of the run's own is created and dropped there)",
    )
    p.add_argument(
        "--redis",
        default="redis://127.0.0.1:6379",
        help="Redis server (database 0, a queue name of the run's own, its keys removed)",
    )
    p.add_argument("--json", default="", help="also write every run's figures to this file")
    a = p.parse_args(argv)
    a.backend_list = choices(p, "--backends", a.backends, BACKENDS)
    a.scenario_list = choices(p, "--scenarios", a.scenarios, SCENARIOS)
    try:
        a.n_list = [int(x) for x in a.n.split(",") if x.strip()]
    except ValueError:
        p.error(f"--n must be whole numbers separated by commas, got {a.n!r}")
    if not a.n_list or any(not 1 <= n <= 1000 for n in a.n_list):
        p.error(f"--n: each must be 1..1000, got {a.n!r}")
    from studyapp.simulation.think_time import parse_think

    try:
        parse_think(a.think)
    except ValueError as exc:
        p.error(f"--think: {exc}")
    if a.ramp is not None and not 0 <= a.ramp <= 600:
        p.error(f"--ramp must be 0..600 seconds, got {a.ramp}")
    if not 10 <= a.pool_size <= 200_000:
        p.error(f"--pool-size must be 10..200000, got {a.pool_size}")
    if not 10 <= a.time_limit <= 1800:
        p.error(f"--time-limit must be 10..1800 seconds, got {a.time_limit}")
    return a


def _run_one(
    env: dict[str, str],
    url: str,
    n: int,
    think: str,
    a: argparse.Namespace,
    out: Path,
    what: str = "gunicorn + worker",
) -> dict[str, Any]:
    cmd = [
        sys.executable, "manage.py", "simulate_participants", "carloan", "--url", url,
        "--n", str(n), "--concurrency", str(n), "--think", think, "--verify",
        "--report", str(out), "--timeout", str(a.time_limit),
        "--time-limit", str(a.time_limit),
        *(["--ramp", str(a.ramp)] if a.ramp is not None else []),
    ]  # fmt: skip
    figures = measured_run(cmd, env, ROOT, out, a.time_limit + 120, what)
    return {"n": n, "think": think, **figures}


def _backend(backend: str, env: dict[str, str], work: Path, a: argparse.Namespace) -> list[Any]:
    prepare(env, pool_size=a.pool_size)
    rows = []
    with running(env, work, web_args=WEB_ARGS, worker_args=WORKER_ARGS[backend]) as url:
        for n in a.n_list:
            for scenario in a.scenario_list:
                think = a.think if scenario == "think" else "0"
                print(f"\n== {backend}, N={n}, think {think} s ==", flush=True)
                figures = _run_one(env, url, n, think, a, work / f"{n}-{scenario}.json")
                rows.append({"backend": backend, "scenario": scenario, **figures})
    return rows


def _summary(rows: list[dict[str, Any]]) -> None:
    print("\nsummary (ms over all requests; the per-page-type tables are above)")
    print(
        f"{'backend':<9}{'N':>5} {'think':<6}{'p50':>7}{'p95':>8}{'p99':>8}{'req/s':>8}"
        f"{'errors':>7} {'verified':<9}{'gen CPU':>8}{'srv CPU':>8}  load avg before/after"
    )
    for r in rows:
        if "failed" in r:
            print(f"{r['backend']:<9}{r['n']:>5} {r['scenario']:<6}{r['failed']}")
            continue
        lat = r["latency_ms"]["all"]
        ok = r.get("verification", {}).get("ok")
        print(
            f"{r['backend']:<9}{r['participants']:>5} {r['scenario']:<6}{lat['p50']:>7.0f}"
            f"{lat['p95']:>8.0f}{lat['p99']:>8.0f}{r['requests_per_s']:>8.1f}{r['errors']:>7} "
            f"{'yes' if ok else 'NO':<9}{100 * r['generator_cpu_share']:>7.0f}%"
            f"{100 * r['server_cpu_share']:>7.0f}%  {r['load_before']} / {r['load_after']}"
        )


def run(a: argparse.Namespace) -> list[dict[str, Any]]:
    """Every backend's runs, as `_summary` prints them."""
    rows: list[dict[str, Any]] = []
    for backend in a.backend_list:
        with tempfile.TemporaryDirectory(prefix=f"bench-load-{backend}-") as tmp:
            work = Path(tmp)
            with backend_env(backend, work, a.pg, a.redis) as env:
                rows += _backend(backend, env, work, a)
    return rows


def failed(rows: list[dict[str, Any]]) -> bool:
    """Any run with an error, a stopped participant or a verification problem."""
    return any("failed" in r or r["errors"] or not r["verification"]["ok"] for r in rows)


def main(argv: list[str] | None = None) -> int:
    a = _args(argv)
    print(f"load average at start: {loadavg()}; {os.cpu_count()} CPUs")
    rows = run(a)
    _summary(rows)
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    return 1 if failed(rows) else 0


if __name__ == "__main__":
    sys.exit(main())
