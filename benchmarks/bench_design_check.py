"""Time of the design check on the demo pool (3,683 profiles): 500 sampled profiles, a design
with 5 recourse methods, fits already stored.

Creates the demo comparison study (`studies.comparison`, seed 0) in a fresh SQLite file
database, sets the design, fits its methods (not timed: a study fits them once, and the
check reuses them), then runs `check_design`'s body (`design_check_run.check_run`) with a
progress bar and prints the wall time, the profiles drawn and rejected, and each method's
predicted own-plan rate. The numeric libraries run on one thread, as the worker does.

    .venv/bin/python benchmarks/bench_design_check.py [--sample 500] [--design ...]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: five methods beside a pool pick
DESIGN = "proximate:1,wachter:1,gs:1,ebr_generated:1,cchvae:1,causal:1"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample", type=int, default=500, help="profiles drawn")
    ap.add_argument("--pool-size", type=int, default=3683)
    ap.add_argument("--design", default=DESIGN)
    args = ap.parse_args()
    if not 1 <= args.sample <= 20_000:
        ap.error("--sample must be 1..20000")

    var = Path(tempfile.mkdtemp(prefix="bench-design-check-"))
    os.environ.pop("DATABASE_URL", None)
    os.environ.update(STUDYAPP_VAR_DIR=str(var), DJANGO_SETTINGS_MODULE="studyapp.config.settings")
    os.environ.setdefault("STUDYAPP_WORKER_THREADS", "1")
    import django

    django.setup()
    from django.core.management import call_command
    from tqdm import tqdm

    from studyapp.generation import method_fitting
    from studyapp.studies import comparison, design_check, design_check_run, updates

    call_command("migrate", verbosity=0)
    t0 = time.perf_counter()
    study = comparison.comparison_study_create(
        slug="bench", pool_size=args.pool_size, seed=0, design="proximate:1"
    )
    study = updates.study_update(
        study=study, changes={"design": args.design, "method_params": comparison.METHOD_PARAMS}
    )
    method_fitting.fits_queue(study=study)
    fits = method_fitting.fits_run(study_id=study.pk)
    print(
        f"setup (study and fits, not timed): {time.perf_counter() - t0:.1f} s; "
        + ", ".join(f"{k} {v}" for k, v in sorted(fits.items()))
    )

    check = design_check.check_create(study=study, sample_size=args.sample)
    bar = tqdm(total=args.sample, desc="design check", unit="profile")

    def progress(done: int, total: int) -> None:
        bar.update(done - bar.n)

    t0 = time.perf_counter()
    state = design_check_run.check_run(check_id=check.pk, progress=progress)
    seconds = time.perf_counter() - t0
    bar.close()
    check.refresh_from_db()
    if state != "done":
        raise SystemExit(f"design check {state}: {check.message}")
    sample = check.result["sample"]
    print(
        f"design check: {seconds:.1f} s wall for {sample['drawn']} profiles of a "
        f"{study.pool_rows}-profile pool ({sample['rejected']} rejected, each selected with "
        f"{len(study.design.split(','))} parts); {os.cpu_count()} CPUs"
    )
    for cond in check.result["conditions"]:
        for part in cond["parts"]:
            if part["method"]:
                print(
                    f"  {part['label']:<15} own plan {part['own_plan_rate']:.3f}  "
                    f"fallbacks: {part['fallback']}"
                )


if __name__ == "__main__":
    main()
