"""Fit time of the seed study's GAMM: the four reference-shaped models (1,738 ratings,
362 participants) and the 2,000-participant one, beside mgcv's time on the same data.

    .venv/bin/python benchmarks/bench_gamm.py [--repeat 3] [--no-r]

Data are the committed fixtures (tests/analysis/gamm/fixtures). mgcv is timed live with
Rscript when R and mgcv are installed (unless --no-r); the time mgcv took when the fixtures
were made is printed too. Prints what it measured, with the machine load.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pandas as pd  # noqa: E402

from analysis.gamm import fit_gamm  # noqa: E402

FIXTURES = ROOT / "tests" / "analysis" / "gamm" / "fixtures"
MODELS = [
    ("null", "acceptance", "sparsity"),
    ("null", "acceptance", "proximity"),
    ("steep", "action", "sparsity"),
    ("steep", "action", "proximity"),
    ("large", "action", "sparsity"),
]
R_SCRIPT = """
suppressPackageStartupMessages(library(mgcv))
a <- commandArgs(trailingOnly = TRUE)
d <- read.csv(a[1])
df <- data.frame(y = d[[a[2]]], x = d[[a[3]]], uid = factor(d$participant))
t0 <- proc.time()[["elapsed"]]
fit <- gam(y ~ s(x, k = 10) + s(uid, bs = "re") + s(uid, x, bs = "re"), data = df,
           method = "REML")
cat(proc.time()[["elapsed"]] - t0, "\\n")
"""


def r_available() -> bool:
    if shutil.which("Rscript") is None:
        return False
    probe = subprocess.run(
        ["Rscript", "-e", "suppressPackageStartupMessages(library(mgcv))"],
        capture_output=True,
    )
    return probe.returncode == 0


def time_mgcv(csv: Path, outcome: str, distance: str) -> float:
    with tempfile.NamedTemporaryFile("w", suffix=".R", delete=False) as fh:
        fh.write(R_SCRIPT)
        script = fh.name
    try:
        out = subprocess.run(
            ["Rscript", script, str(csv), outcome, distance],
            capture_output=True,
            text=True,
            check=True,
        )
        return float(out.stdout.split()[-1])
    finally:
        os.unlink(script)


def recorded_mgcv(study: str, outcome: str, distance: str) -> float | None:
    path = FIXTURES / f"mgcv_{study}_{outcome}_{distance}_tp.json"
    if not path.exists():
        return None
    return float(json.loads(path.read_text())["seconds"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3, help="fits per model (best is shown)")
    parser.add_argument("--no-r", action="store_true", help="do not time mgcv live")
    parser.add_argument(
        "--r-skip-large",
        action="store_true",
        help="time mgcv live on the 362-participant fits only",
    )
    args = parser.parse_args()
    live_r = not args.no_r and r_available()
    print(f"load average before: {os.getloadavg()}  cpus: {os.cpu_count()}")
    header = f"{'model':34s}{'n':>6s}{'ids':>6s}{'ours best':>11s}{'ours all':>22s}"
    header += f"{'mgcv live':>11s}{'mgcv rec.':>11s}"
    print(header)
    for study, outcome, distance in MODELS:
        csv = FIXTURES / f"study_{study}.csv"
        data = pd.read_csv(csv, dtype={"participant": str})
        times = []
        for _ in range(args.repeat if study != "large" else max(1, args.repeat - 1)):
            t0 = time.perf_counter()
            fit_gamm(data, outcome, distance, "participant")
            times.append(time.perf_counter() - t0)
        run_r = live_r and not (args.r_skip_large and study == "large")
        live = f"{time_mgcv(csv, outcome, distance):.1f}" if run_r else "-"
        rec = recorded_mgcv(study, outcome, distance)
        label = f"{study}: {outcome} ~ s({distance})"
        print(
            f"{label:34s}{len(data):6d}{data['participant'].nunique():6d}{min(times):10.2f}s"
            f"{' '.join(f'{t:.2f}' for t in times):>22s}{live:>11s}"
            f"{(f'{rec:.1f}' if rec is not None else '-'):>11s}",
            flush=True,
        )
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
