"""Fit time of a method-comparison GAMM at 2,000 participants, beside mgcv's time on the same data.

    .venv/bin/python benchmarks/bench_gamm_methods.py [--participants 2000] [--repeat 3]
        [--no-r] [--r-timeout 900] [--r-fitter gam|bam]

Model: action ~ strategy + s(proximity, by = strategy) + s(uid, bs = "re")
               + s(uid, proximity, bs = "re")   (REML), 6 ratings per participant, three
strategies; data simulated here with a fixed seed. mgcv is timed with Rscript when R and mgcv are
installed, unless --no-r: ``gam(method = "REML")`` by default (the issue's anchor) or
``bam(method = "fREML")``. When mgcv does not finish within --r-timeout the printed ratio
is a lower bound (the timeout over our time). Prints what it measured, with the machine's
CPU count, load and R's BLAS.
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

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from analysis.gamm import fit_gamm  # noqa: E402

FORMULA = (
    "action ~ strategy + s(proximity, by = strategy) + s(uid, bs = 're') "
    "+ s(uid, proximity, bs = 're')"
)
R_SCRIPT = """
suppressPackageStartupMessages(library(mgcv))
a <- commandArgs(trailingOnly = TRUE)
d <- read.csv(a[1]); d$uid <- factor(d$uid); d$strategy <- factor(d$strategy)
f <- action ~ strategy + s(proximity, by = strategy) + s(uid, bs = "re") +
         s(uid, proximity, bs = "re")
t0 <- proc.time()[["elapsed"]]
m <- if (a[2] == "gam") gam(f, data = d, method = "REML") else bam(f, data = d, method = "fREML")
cat(proc.time()[["elapsed"]] - t0, AIC(m), "\\n")
"""


def simulate(n_participants: int, seed: int = 7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    per = 6
    uid = np.repeat([f"u{i:05d}" for i in range(n_participants)], per)
    n = uid.size
    strategy = np.tile(["sparsest", "proximate", "random"], n // 3 + 1)[:n]
    prox = np.round(
        np.where(strategy == "random", rng.uniform(0.2, 4, n), rng.uniform(0, 2.5, n)), 2
    )
    b0 = np.repeat(rng.normal(0, 0.9, n_participants), per)
    b1 = np.repeat(rng.normal(0, 0.3, n_participants), per)
    f = np.select(
        [strategy == "sparsest", strategy == "proximate"],
        [-1.2 * np.minimum(prox, 1.2), -0.6 * prox],
        0.4 * np.sin(prox),
    )
    y = 4 + 0.3 * (strategy == "proximate") + f + b0 + b1 * prox + rng.normal(0, 1, n)
    return pd.DataFrame({"uid": uid, "strategy": strategy, "proximity": prox, "action": y.round(3)})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--participants", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-r", action="store_true")
    ap.add_argument("--r-timeout", type=float, default=900.0)
    ap.add_argument("--r-fitter", choices=("gam", "bam"), default="gam")
    args = ap.parse_args()
    data = simulate(args.participants)
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    print(f"data: {len(data)} ratings, {args.participants} participants, 3 strategies")
    print(f"model: {FORMULA}")
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        fit = fit_gamm(FORMULA, data)
        times.append(time.perf_counter() - t0)
    print(
        f"ours: median {np.median(times):.2f} s, min {min(times):.2f} s over {args.repeat} fits "
        f"(coefficients {fit.design.p}, converged {fit.converged}, AIC {fit.aic:.2f})"
    )
    if args.no_r or shutil.which("Rscript") is None:
        print("mgcv: not timed (no Rscript or --no-r)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        csv, script = Path(tmp) / "d.csv", Path(tmp) / "b.R"
        data.to_csv(csv, index=False)
        script.write_text(R_SCRIPT)
        blas = subprocess.run(
            ["Rscript", "-e", "cat(extSoftVersion()[['BLAS']])"], capture_output=True, text=True
        ).stdout.strip()
        label = "gam(REML)" if args.r_fitter == "gam" else "bam(fREML)"
        print(f"mgcv {label}: R's BLAS {blas or 'unknown'}")
        try:
            r = subprocess.run(
                ["Rscript", str(script), str(csv), args.r_fitter],
                capture_output=True,
                text=True,
                timeout=args.r_timeout,
            )
        except subprocess.TimeoutExpired:
            ratio = args.r_timeout / float(np.median(times))
            print(
                f"mgcv {label}: still running after {args.r_timeout:.0f} s, stopped; "
                f"ratio mgcv/ours > {ratio:.0f}"
            )
            return
    if r.returncode != 0:
        print(f"mgcv: failed ({r.stderr.strip().splitlines()[-1:]})")
        return
    seconds, aic = (float(v) for v in r.stdout.split()[:2])
    print(
        f"mgcv {label}: {seconds:.1f} s, AIC {aic:.2f} (ours {fit.aic:.2f}); "
        f"ratio mgcv/ours {seconds / float(np.median(times)):.1f}"
    )


if __name__ == "__main__":
    main()
