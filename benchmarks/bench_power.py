"""Speed of the power analysis on the seed study's model: 5 grid points x 200 replicates of
``action ~ s(proximity) + s(participant, bs = "re") + s(participant, proximity, bs = "re")``
(REML, 1..7 ratings, 362 participants x 5 ratings at the largest point), and the same
replicates fitted by mgcv in R (a sample of them, via Rscript).

    .venv/bin/python benchmarks/bench_power.py                      # the full size
    .venv/bin/python benchmarks/bench_power.py --replicates 4 --r-sample 2   # a quick look
    [--grid 72,145,217,290,362] [--workers 2 | --scheduler tcp://HOST:PORT] [--no-r]

Prints replicates per second of the whole loop (simulation, fit and tests, through
``analysis.grid.map_cells``) and, for the sampled replicates, the time of our fit beside
mgcv's ``gam(..., method = "REML")`` + ``summary()`` on the same data set (timed inside R, so
R's start-up is left out), with their ratio. Prints the machine's load before and after.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from analysis.gamm import fit_gamm  # noqa: E402
from analysis.power import (  # noqa: E402
    StatedModel,
    cell_rng,
    default_formula,
    make_plan,
    parse_spec,
    run_replicates,
    summarise,
)

#: a seed-shaped study: five ratings each, proximity, participant intercepts and slopes
SEED_SHAPED = {
    "outcome": "action",
    "ratings_per_participant": 5,
    "distance": {"name": "proximity", "low": 0.0, "high": 1.0},
    "intercept": 4.2,
    "smooth": {"shape": "exponential", "change": -0.3, "rate": 3},
    "random_effects": {"intercept_sd": 0.9, "slope_sd": 0.4},
    "residual_sd": 1.2,
    "cut_points": [1.5, 2.5, 3.5, 4.5, 5.5, 6.5],
}
R_SCRIPT = """
suppressPackageStartupMessages(library(mgcv))
for (f in commandArgs(trailingOnly = TRUE)) {
  d <- read.csv(f, colClasses = c(participant = "character"))
  d$participant <- factor(d$participant)
  t0 <- proc.time()[["elapsed"]]
  fit <- gam(action ~ s(proximity) + s(participant, bs = "re") +
             s(participant, proximity, bs = "re"), data = d, method = "REML")
  p <- summary(fit)$s.table["s(proximity)", "p-value"]
  cat(proc.time()[["elapsed"]] - t0, p, "\\n")
}
"""


def r_available() -> bool:
    if shutil.which("Rscript") is None:
        return False
    probe = subprocess.run(["Rscript", "-e", "library(mgcv)"], capture_output=True)
    return probe.returncode == 0


def compare_with_mgcv(plan, cells: list[tuple[int, int]]) -> None:
    """Our fit and mgcv's on the data sets of ``cells`` (simulated once, written as CSV)."""
    with tempfile.TemporaryDirectory(prefix="bench-power-") as tmp:
        files, ours = [], []
        for n, rep in cells:
            data = plan.model.simulate(n, cell_rng(plan.seed, n, rep))
            path = Path(tmp) / f"cell_{n}_{rep}.csv"
            data.to_csv(path, index=False, float_format="%.17g")
            files.append(str(path))
            t0 = time.perf_counter()
            fit = fit_gamm(plan.formula, data)
            ours.append((time.perf_counter() - t0, fit.smooth["s(proximity)"].p))
        script = Path(tmp) / "fit.R"
        script.write_text(R_SCRIPT)
        out = subprocess.run(
            ["Rscript", str(script), *files], capture_output=True, text=True, check=True
        )
    theirs = [tuple(map(float, line.split())) for line in out.stdout.strip().splitlines()]
    print(f"{'cell (N, replicate)':>20s}{'ours s':>9s}{'mgcv s':>9s}{'ratio':>8s}"
          f"{'p ours':>11s}{'p mgcv':>11s}")  # fmt: skip
    for (n, rep), (t_ours, p_ours), (t_r, p_r) in zip(cells, ours, theirs, strict=True):
        print(f"{f'({n}, {rep})':>20s}{t_ours:9.3f}{t_r:9.3f}{t_r / t_ours:8.1f}"
              f"{p_ours:11.3g}{p_r:11.3g}")  # fmt: skip
    total_ours = sum(t for t, _ in ours)
    total_r = sum(t for t, _ in theirs)
    print(
        f"sample of {len(cells)}: ours {total_ours:.2f} s, mgcv {total_r:.2f} s, "
        f"mgcv / ours = {total_r / total_ours:.1f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", default="72,145,217,290,362", help="participant numbers")
    parser.add_argument("--replicates", type=int, default=200, help="per grid point (200)")
    parser.add_argument("--r-sample", type=int, default=5, help="replicates fitted by mgcv")
    parser.add_argument("--workers", type=int, help="Dask LocalCluster workers")
    parser.add_argument("--scheduler", help="Dask scheduler tcp://HOST:PORT")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-r", action="store_true", help="do not time mgcv")
    args = parser.parse_args()
    grid = [int(x) for x in args.grid.split(",")]
    spec = parse_spec(SEED_SHAPED)
    plan = make_plan(StatedModel(spec), default_formula(spec), ["s(proximity)"], args.seed)
    print(f"model: {plan.formula}")
    print(f"grid: {grid} x {args.replicates} replicates; largest: {max(grid)} participants x 5")
    print(f"load average before: {os.getloadavg()}  cpus: {os.cpu_count()}", flush=True)
    t0 = time.perf_counter()
    table = run_replicates(
        plan, grid, args.replicates, scheduler=args.scheduler, workers=args.workers
    )
    seconds = time.perf_counter() - t0
    print(summarise(table, plan.tests, 0.05).to_string(index=False))
    print(
        f"{len(table)} replicates in {seconds:.1f} s: {len(table) / seconds:.2f} replicates/s "
        f"(failed fits: {int((table['error'] != '').sum())})"
    )
    print(f"load average after: {os.getloadavg()}", flush=True)
    if args.no_r or not r_available():
        print("mgcv: not timed" + ("" if args.no_r else " (Rscript with mgcv not found)"))
        return 0
    # a sample spread over the grid, largest points first, replicate 1, 2, ...
    cells = [(n, 1 + i // len(grid)) for i, n in enumerate(sorted(grid, reverse=True) * 10)]
    compare_with_mgcv(plan, cells[: args.r_sample])
    print(f"load average after mgcv: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
