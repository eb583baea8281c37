"""How many participants this host serves at p95 <= 200 ms: the researcher's question.

Three modes, each starting the stack itself on a database of its own that it removes
afterwards (as bench_load does), all traffic to 127.0.0.1, stopping only what it started:

* ``--mode realistic``: participants stay tens of seconds on each page, drawn from the
  distribution stated in `benchmarks/capacity_dwell.py` (printed at the start). All N
  arrive evenly over ``--ramp`` seconds and walk the demo study once. N goes up the
  ``--steps`` until a run misses the target (p95 over all requests above ``--target-ms``,
  an error, a stopped participant or a failed database check); per backend it prints
  "largest N with p95 <= 200 ms". By default a run measures ``--window`` seconds after
  the last arrival, when all N are on the site at once (a walk of the demo takes about
  seven minutes), and stops there; ``--window 0`` lets every walk end. ``--time-scale``
  below 1 shortens every dwell, which is then not the realistic load (the report says so).
* ``--mode stress``: bench_load's 1-3 s think runs per backend, then oTree (from its own
  virtual environment, ``--otree-python``) on the same pages (`benchmarks/otree_app`)
  with the same load generator, N and think time, served by ``otree prodserver``.
* ``--mode scaling``: PostgreSQL; the same N participants against one and then two
  gunicorn nodes behind HAProxy, node i pinned to core i (``taskset -c i``).

Each prints a table (and writes every run's figures with ``--json``): p50/p95/p99 in ms,
requests/s, errors, the database check, the server's CPU and the load average. It prints
how long it will take before it starts; ``--plan`` prints only that.

    .venv/bin/python benchmarks/bench_capacity.py --mode realistic --plan
    .venv/bin/python benchmarks/bench_capacity.py --mode realistic --json capacity.json
    .venv/bin/python benchmarks/bench_capacity.py --mode stress --otree-python /tmp/otree-venv/bin/python
    .venv/bin/python benchmarks/bench_capacity.py --mode scaling --n 300
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.capacity_dwell import (  # noqa: E402 - after the path is set
    DEFAULT_STEPS,
    DEMO_PAGES,
    TARGET_P95_MS,
    DwellTimes,
    largest_passing,
    passes,
    plan_run,
)
from benchmarks.cli import OneLineParser  # noqa: E402
from benchmarks.load_common import BACKENDS, choices, whole_numbers  # noqa: E402

MODES = ("realistic", "stress", "scaling")
#: minutes a stack takes to start (migrate, the demo study and its model, the servers)
SETUP_MIN = 2.0
#: minutes one stress or scaling run of up to 1,000 participants takes with 1-3 s think
STRESS_RUN_MIN = 1.5


def _args(argv: list[str] | None) -> argparse.Namespace:
    p = OneLineParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mode", choices=MODES, required=True)
    p.add_argument("--backends", default=",".join(BACKENDS), help="realistic, stress")
    p.add_argument("--steps", default=",".join(map(str, DEFAULT_STEPS)),
                   help="realistic: participants at once, tried in order (each 1..5000)")  # fmt: skip
    p.add_argument("--ramp", type=float, default=60.0,
                   help="realistic: seconds over which the N participants arrive (0..600)")  # fmt: skip
    p.add_argument("--time-scale", type=float, default=1.0,
                   help="realistic: every dwell times this (0 < x <= 1; below 1 the load "
                   "per participant is higher than realistic)")  # fmt: skip
    p.add_argument("--target-ms", type=float, default=TARGET_P95_MS)
    p.add_argument("--window", type=float, default=180.0,
                   help="realistic: seconds measured after the last arrival, when all N are "
                   "on the site at once; then the run stops (0: each walk runs to its end)")  # fmt: skip
    p.add_argument("--slack", type=float, default=600.0,
                   help="realistic: seconds a run may take beyond its longest dwells (the "
                   "plans' computation, queueing) before participants are stopped")  # fmt: skip
    p.add_argument("--n", default="500",
                   help="stress, scaling: participants at once (each 1..1000; e.g. 200,500)")  # fmt: skip
    p.add_argument("--think", default="1,3", help="stress, scaling: MIN,MAX seconds")
    p.add_argument("--stress-ramp", type=float, default=None,
                   help="stress, scaling: arrivals over this many seconds (default: bench_load's)")  # fmt: skip
    p.add_argument("--nodes", default="1,2", help="scaling: node counts (each 1..cores)")
    p.add_argument("--otree-python", default="",
                   help="stress: python of a virtual environment with otree (pip install otree)")  # fmt: skip
    p.add_argument("--pool-size", type=int, default=3683, help="demo pool rows (10..200000)")
    p.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    p.add_argument("--redis", default="redis://127.0.0.1:6379")
    p.add_argument("--json", default="", help="also write every run's figures to this file")
    p.add_argument("--plan", action="store_true", help="print what it would run and how long")
    a = p.parse_args(argv)
    a.backend_list = choices(p, "--backends", a.backends, BACKENDS)
    a.step_list = sorted(set(whole_numbers(p, "--steps", a.steps, 1, 5000)))
    a.n_list = whole_numbers(p, "--n", a.n, 1, 1000)
    a.node_list = whole_numbers(p, "--nodes", a.nodes, 1, 64)
    if not 0 <= a.ramp <= 600:
        p.error(f"--ramp must be 0..600 seconds, got {a.ramp}")
    if not 0 < a.time_scale <= 1:
        p.error(f"--time-scale must be in (0, 1], got {a.time_scale}")
    if not 0 <= a.window <= 3600:
        p.error(f"--window must be 0..3600 seconds, got {a.window}")
    if not 0 <= a.slack <= 3600:
        p.error(f"--slack must be 0..3600 seconds, got {a.slack}")
    if a.stress_ramp is not None and not 0 <= a.stress_ramp <= 600:
        p.error(f"--stress-ramp must be 0..600 seconds, got {a.stress_ramp}")
    from studyapp.simulation.think_time import parse_think

    try:
        parse_think(a.think)
    except ValueError as exc:
        p.error(f"--think: {exc}")
    if a.mode == "scaling":
        import os

        cores = len(os.sched_getaffinity(0))
        if max(a.node_list) > cores:
            p.error(f"--nodes: one core per node, and this host lets us use {cores}")
    return a


def plan_text(a: argparse.Namespace) -> str:
    """What the mode runs and how long it takes (the realistic search at most: it stops
    at the first step that misses the target)."""
    if a.mode == "realistic":
        dwell = DwellTimes(a.time_scale)
        run = plan_run(dwell, a.ramp)
        runs = len(a.step_list) * len(a.backend_list)
        if a.window:
            each = (a.ramp + a.window) / 60
            return (
                f"{dwell.describe()}\n"
                f"arrivals over {a.ramp:g} s, then {a.window:g} s measured with all N on the "
                f"site (requests sent after the last arrival), then the run stops\n"
                f"steps {a.step_list} on {', '.join(a.backend_list)}: each run {each:.1f} min; "
                f"all {runs} runs about {len(a.backend_list) * SETUP_MIN + runs * each:.0f} min "
                "(fewer when a step misses the target)"
            )
        total = len(a.backend_list) * SETUP_MIN + runs * run.typical_s / 60
        return (
            f"{dwell.describe()}\n"
            f"pages a participant submits: {', '.join(DEMO_PAGES)}; arrivals over {a.ramp:g} s\n"
            f"steps {a.step_list} on {', '.join(a.backend_list)}: each run about "
            f"{run.typical_s / 60:.1f} min (the last arrival plus the 99th percentile walk), "
            f"at most {(run.bound_s + a.slack) / 60:.0f} min; all {runs} runs about "
            f"{total:.0f} min (fewer when a step misses the target)"
        )
    if a.mode == "stress":
        runs = len(a.n_list) * (len(a.backend_list) + 1)
        total = (len(a.backend_list) + 1) * SETUP_MIN + runs * STRESS_RUN_MIN
        return (
            f"think {a.think} s, N {a.n_list}: bench_load on {', '.join(a.backend_list)}, then "
            f"oTree; {runs} runs, about {total:.0f} min"
        )
    runs = len(a.n_list) * len(a.node_list)
    return (
        f"PostgreSQL, nodes {a.node_list} (node i on core i), think {a.think} s, N {a.n_list}: "
        f"{runs} runs, about {SETUP_MIN + runs * STRESS_RUN_MIN:.0f} min"
    )


def table(rows: list[dict[str, Any]], target_ms: float) -> str:
    """One line per run: the figures a capacity question needs."""
    lines = [
        f"{'mode':<10}{'backend':<14}{'nodes':>5}{'N':>6}{'p50':>7}{'p95':>8}{'p99':>8}"
        f"{'req/s':>8}{'errors':>7} {'verified':<9}{'srv CPU':>8} {'target':<7} load avg before/after"
    ]
    for r in rows:
        head = f"{r['mode']:<10}{r.get('backend', ''):<14}{r.get('nodes', ''):>5}"
        if "failed" in r:
            lines.append(f"{head}{r.get('n', ''):>6}  {r['failed']}")
            continue
        lat = r["latency_ms"]["all"]
        ok = r.get("verification", {}).get("ok")
        lines.append(
            f"{head}{r['participants']:>6}{lat['p50']:>7.0f}{lat['p95']:>8.0f}{lat['p99']:>8.0f}"
            f"{r['requests_per_s']:>8.1f}{r['errors']:>7} {'yes' if ok else 'NO':<9}"
            f"{100 * r['server_cpu_share']:>7.0f}% {'met' if passes(r, target_ms) else 'missed':<7}"
            f" {r['load_before']} / {r['load_after']}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    a = _args(argv)
    print(plan_text(a), flush=True)
    if a.plan:
        return 0
    from benchmarks import capacity_modes

    print(capacity_modes.header(), flush=True)
    rows = getattr(capacity_modes, a.mode)(a)
    print(f"\nsummary (ms over all requests; target p95 <= {a.target_ms:g} ms)")
    print(table(rows, a.target_ms))
    if a.mode == "realistic":
        if a.time_scale != 1:
            print(f"time scale {a.time_scale:g}: NOT the realistic load (dwell x{a.time_scale:g})")
        for backend in a.backend_list:
            mine = [r for r in rows if r["backend"] == backend]
            best = largest_passing(mine, a.target_ms)
            print(f"{backend}: largest N with p95 <= {a.target_ms:g} ms: {best or 'none'}")
    if a.mode == "scaling":
        for n in a.n_list:
            by = {r["nodes"]: r for r in rows if r.get("participants") == n and "failed" not in r}
            if 1 in by and 2 in by:
                gain = by[2]["requests_per_s"] / by[1]["requests_per_s"]
                print(f"N={n}: 2 nodes serve {gain:.2f} times the requests/s of 1")
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    return 1 if any("failed" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
