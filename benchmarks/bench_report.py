"""Time of `recourse-analysis report` on an export of 2,000 participants x 6 evaluations.

    .venv/bin/python benchmarks/bench_report.py [--participants 2000] [--plans 6] [--keep DIR]

The export is made from the demo comparison study's (examples/data/demo_export): its
completed participants' rows resampled under new ids, six plans each from its evaluations,
with ratings drawn to depend on the distance. Prints the time of each stage and in all, with
the machine load."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEMO = ROOT / "examples" / "data" / "demo_export"


def make_export(folder: Path, n: int, plans: int, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    shutil.copytree(DEMO, folder, ignore=shutil.ignore_patterns("page_visits.csv"))
    pa = pd.read_csv(DEMO / "participants.csv", dtype=str, keep_default_na=False)
    ev = pd.read_csv(DEMO / "evaluations.csv", dtype=str, keep_default_na=False)
    done = pa[pa["outcome"] == "completed"]
    people = done.iloc[rng.integers(0, len(done), n)].copy()
    people["participant"] = [str(i + 1) for i in range(n)]
    people["is_test"] = "0"
    people["n_evaluations"] = str(plans)
    rows = ev.iloc[rng.integers(0, len(ev), n * plans)].copy()
    rows["participant"] = np.repeat(people["participant"].to_numpy(), plans)
    rows["position"] = np.tile(np.arange(1, plans + 1), n).astype(str)
    rows["recourse"] = [str(i + 1) for i in range(n * plans)]
    prox = rows["proximity"].astype(float).to_numpy()
    for rating in ("acceptance", "action"):
        value = 5.5 - 0.6 * prox + rng.normal(0, 1.3, len(rows))
        rows[rating] = np.clip(np.rint(value), 1, 7).astype(int).astype(str)
    # each participant's own profile and screening answers on their plans
    own = people.set_index("participant")
    for col in [c for c in rows.columns if c.startswith("x_") or c in ("gender", "age", "income")]:
        rows[col] = rows["participant"].map(own[col]).to_numpy()
    people.to_csv(folder / "participants.csv", index=False)
    rows.to_csv(folder / "evaluations.csv", index=False)
    return folder


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--participants", type=int, default=2000)
    parser.add_argument("--plans", type=int, default=6)
    parser.add_argument("--keep", type=Path, help="write the export and report here")
    args = parser.parse_args()
    from analysis.report import Options, write_report
    from analysis.report import build as b
    from analysis.report import models as m

    base = args.keep or Path(tempfile.mkdtemp(prefix="bench-report-"))
    times: dict[str, tuple[float, float]] = {}

    def timed(stage: str, fn, *a, **kw):  # wall and CPU seconds (all threads) of one stage
        w, c = time.perf_counter(), time.process_time()
        result = fn(*a, **kw)
        times[stage] = (time.perf_counter() - w, time.process_time() - c)
        return result

    try:
        export = make_export(base / "export", args.participants, args.plans)
        opts = Options()
        data = timed("read and check the export", b.read_input, export)
        flow = timed("flow and descriptives", b.participant_flow, data.participants, 0, False)
        table = b.descriptives(data.evaluations, opts.factor)
        seed = timed("seed GAMMs (4)", m.seed_models, data.export, k=10, ordinal=False)
        from analysis.gamm.ordinal import compare_with_gaussian

        kept = data.export.kept_evaluations()
        timed("ordinal GAMMs (4)", compare_with_gaussian, kept, seed.fits, "participant", "tp",
              10, False)  # fmt: skip
        cmp, why = timed("comparison models (8 fits)", m.comparison_models, data.export,
                         str(export), opts.factor, k=10, min_per_level=20)  # fmt: skip
        seg = timed("segregation (100 bootstrap draws)", b.segregation, data, None, None,
                    bootstrap=100, seed=0)  # fmt: skip
        report = b.Report(data, opts, flow, table, m.Models(seed, cmp, why), seg,
                          b.coding_agreement(data), b.methods_paragraph(data, opts.factor))  # fmt: skip
        written = timed("figures, tables, HTML", write_report, report, base / "report")
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    n_ev = args.participants * args.plans
    print(f"report of {args.participants} participants x {args.plans} evaluations ({n_ev}), "
          f"{len(written)} files:")  # fmt: skip
    for stage, (wall, cpu) in times.items():
        print(f"  {stage}: {wall:.1f} s wall, {cpu:.1f} s CPU")
    wall = sum(w for w, _ in times.values())
    cpu = sum(c for _, c in times.values())
    print(f"  in all {wall:.1f} s wall, {cpu:.1f} s CPU; load average "
          f"{os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
