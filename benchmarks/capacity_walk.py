"""One realistic run of the capacity benchmark, in a process of its own (bench_capacity
starts it with the stack's environment): N participants walk the demo study over HTTP,
each staying on each page as long as `capacity_dwell` draws, then the database is checked
as `simulate_participants --verify` checks it. Writes the figures as JSON.

    python benchmarks/capacity_walk.py --url http://127.0.0.1:PORT --n 500 --report out.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--url", required=True)
    p.add_argument("--study", default="carloan")
    p.add_argument("--n", type=int, required=True)
    p.add_argument("--ramp", type=float, required=True, help="seconds over which all arrive")
    p.add_argument("--time-scale", type=float, default=1.0)
    p.add_argument("--time-limit", type=float, required=True)
    p.add_argument(
        "--window",
        type=float,
        default=0.0,
        help="seconds measured after the last arrival, then the run stops (0: every walk ends)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--report", required=True)
    a = p.parse_args(argv)

    import django

    django.setup()
    from django import db
    from django.utils import timezone

    from benchmarks.capacity_dwell import DwellTimes
    from studyapp.management.commands.simulate_participants import format_load
    from studyapp.models import Study
    from studyapp.simulation.load import run_load
    from studyapp.simulation.load_verify import verify_load

    study = Study.objects.get(slug=a.study)
    since = timezone.now()
    limit = a.ramp + a.window if a.window else a.time_limit
    start = time.monotonic()
    report = run_load(
        study, a.url, n=a.n, concurrency=a.n, think=(0.0, 0.0), seed=a.seed,
        wait_timeout=a.time_limit, ramp_s=a.ramp, time_limit_s=limit,
        dwell=DwellTimes(a.time_scale),
    )  # fmt: skip
    db.connections.close_all()
    figures = report.as_dict()
    if a.window:
        figures.update(_window(report, start + a.ramp, time.monotonic()))
    print(format_load(figures))
    verification = verify_load(study, report.results, since=since, require_complete=False)
    figures["verification"] = {"ok": verification.ok, "problems": verification.problems}
    print(verification.summary())
    figures["pages_per_participant"] = _pages(report)
    Path(a.report).write_text(json.dumps(figures, indent=1))
    stopped = figures["failed_participants"]
    return 0 if verification.ok and not stopped and not report.errors else 1


def _window(report, since: float, until: float) -> dict:  # noqa: ANN001 - a LoadReport
    """The figures over the requests sent after the last arrival (every participant on the
    site, none finished yet), in place of the whole run's; participants the run's end cut
    off mid-walk are counted apart from those stopped by a problem."""
    from studyapp.simulation.load import TIME_LIMIT_PASSED

    steady = [s for s in report.samples if s.at >= since]
    cut = [r for r in report.failed if r.error == TIME_LIMIT_PASSED]
    return {
        "window_s": round(until - since, 1),
        "latency_ms_whole_run": report.latency_table(),
        "latency_ms": report.latency_table(steady) if steady else report.latency_table(),
        "requests_in_window": len(steady),
        "requests_per_s": len(steady) / (until - since) if until > since else 0.0,
        "cut_participants": len(cut),
        "failed_participants": len(report.failed) - len(cut),
        "first_failures": [f"#{r.index} {r.code}: {r.error}" for r in report.failed
                           if r.error != TIME_LIMIT_PASSED][:10],
    }  # fmt: skip


def _pages(report) -> dict[str, int]:  # noqa: ANN001 - a LoadReport
    """Submits per page type, over all participants: the walk the dwell times apply to."""
    out: dict[str, int] = {}
    for s in report.samples:
        if s.label == "start" or s.label.endswith(" submit"):
            key = s.label.removesuffix(" submit")
            out[key] = out.get(key, 0) + 1
    return out


if __name__ == "__main__":
    sys.exit(main())
