"""Fit + full summary of the seed GAMM at scale, ours against gamm4 and mgcv's gam and bam.

    .venv/bin/python benchmarks/bench_gamm_scale.py [--sizes 362,2000,20000,100000] [--per 10]
        [--repeat 1] [--r-max 20000] [--bam-max 2000] [--gam-max 362] [--r-timeout 900]
        [--no-r] [--r-fitters gamm4,gamm4c,bam,gam]

R needs Debian's r-cran-mgcv and r-cran-gamm4 (and libopenblas0-pthread for a fair BLAS).

Data (simulated here, numpy seed 11): participants x PER whole-number ratings 1..7 of a distance
(two decimals, 401 distinct values), a participant random intercept (SD 0.8) and slope (SD 0.3).
Model: rating ~ s(distance, k = 10) + s(participant, bs = "re") + s(participant, distance,
bs = "re") by REML. Each fit runs in a child process, and the fitters alternate within a size
(ours, gamm4, gamm4c, bam, then gamm4, ...), so that they meet the same machine load:

* ours: ``fit_gamm`` and ``str(fit.summary())`` (every test: s(distance), both random effects);
* gamm4: ``gamm4(rating ~ s(distance), random = ~ (1 | participant) + (0 + distance |
  participant))`` (our model) and ``summary(g$gam)`` (lme4 has no test of the random effects);
* gamm4c: the same with a correlated intercept and slope, ``random = ~ (1 + distance |
  participant)`` (one parameter more; the anchor the issue measured);
* bam: ``bam(..., method = "fREML", discrete = TRUE)`` and ``summary()`` (mgcv's random-effect
  tests included);
* gam: ``gam(..., method = "REML")`` and ``summary()``, the fit our numbers are checked against.

Seconds are measured inside the child around fit + summary (not reading the CSV or starting
the interpreter); peak memory is the child's maximum resident set size from ``os.wait4``
(``resource`` usage of that child alone: interpreter, data and fit), with the child's CPU
seconds (user + system, its whole run), which a busy machine inflates less than wall time.
R runs as installed (BLAS
printed; OpenBLAS uses every core unless OPENBLAS_NUM_THREADS says otherwise); ours uses one
BLAS thread. Ratios are R / ours per size, on medians. Above ``--r-max`` participants only ours
runs, bam only up to ``--bam-max`` and gam up to ``--gam-max``: its fREML step works on dense p x p matrices (p = 2 x
participants + 9), whose memory grows as the square of the participants (docs/gamm.md has
what it measured).
An R fit that passes ``--r-timeout`` is stopped and reported as a lower bound.
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

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

R_COMMON = """
a <- commandArgs(trailingOnly = TRUE)
d <- read.csv(a[1], colClasses = c(participant = "character"))
df <- data.frame(y = d$rating, x = d$distance, uid = factor(d$participant))
"""
R_BAM = (
    "suppressPackageStartupMessages(library(mgcv))\n"
    + R_COMMON
    + """t0 <- proc.time()[["elapsed"]]
m <- bam(y ~ s(x, bs = "tp", k = 10) + s(uid, bs = "re") + s(uid, x, bs = "re"), data = df,
         method = "fREML", discrete = TRUE)
s <- summary(m)
cat(proc.time()[["elapsed"]] - t0, s$s.table[, "edf"], "\\n")
"""
)
R_GAM = R_BAM.replace("bam(", "gam(").replace('"fREML", discrete = TRUE', '"REML"')
R_GAMM4 = (
    "suppressPackageStartupMessages(library(gamm4))\n"
    + R_COMMON
    + """t0 <- proc.time()[["elapsed"]]
g <- gamm4(y ~ s(x, bs = "tp", k = 10), random = RANDOM, data = df, REML = TRUE)
s <- summary(g$gam)
cat(proc.time()[["elapsed"]] - t0, s$s.table[, "edf"], "\\n")
"""
)
#: gamm4 with our model (independent intercept and slope), and with a correlated pair
GAMM4_RANDOM = {"gamm4": "~ (1 | uid) + (0 + x | uid)", "gamm4c": "~ (1 + x | uid)"}


def simulate(participants: int, per: int, seed: int = 11) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = participants * per
    uid = np.repeat([f"u{i:06d}" for i in range(participants)], per)
    distance = np.round(rng.uniform(0, 4, n), 2)
    b0 = np.repeat(rng.normal(0, 0.8, participants), per)
    b1 = np.repeat(rng.normal(0, 0.3, participants), per)
    latent = 4.6 - 1.1 * np.minimum(distance, 1.6) + b0 + b1 * distance + rng.normal(0, 1.1, n)
    rating = np.clip(np.round(latent), 1, 7).astype(int)
    return pd.DataFrame({"participant": uid, "distance": distance, "rating": rating})


def worker(csv: str) -> None:
    """Ours in this (child) process: fit + full summary, timed; one JSON line."""
    from analysis.gamm import fit_gamm

    data = pd.read_csv(csv, dtype={"participant": str})
    t0 = time.perf_counter()
    fit = fit_gamm(data, "rating", "distance", "participant")
    text = str(fit.summary())
    seconds = time.perf_counter() - t0
    edf = [round(r.edf, 3) for r in fit.smooth.values()]
    print(json.dumps({"seconds": seconds, "edf": edf, "chars": len(text)}))


def run_child(cmd: list[str], timeout: float) -> dict:
    """Run cmd; its own wall time, peak RSS (os.wait4) and stdout, or a timeout."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=ROOT)
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - t0 > timeout:
                proc.kill()
                _, status, usage = os.wait4(proc.pid, 0)
                proc.returncode = -9
                return {"timeout": True, "wall": time.perf_counter() - t0}
            time.sleep(0.05)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        return {
            "timeout": False,
            "rc": proc.returncode,
            "stdout": out.read(),
            "stderr": err.read(),
            "wall": wall,
            "cpu": usage.ru_utime + usage.ru_stime,
            "rss_mb": usage.ru_maxrss / 1024.0,
        }


def measure(fitter: str, csv: Path, scripts: dict[str, Path], timeout: float) -> dict:
    load = os.getloadavg()[0]
    if fitter == "ours":
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", str(csv)]
    else:
        cmd = ["Rscript", str(scripts[fitter]), str(csv)]
    res = run_child(cmd, timeout)
    res["load"] = load
    if res["timeout"]:
        return res
    if res["rc"] != 0:
        lines = res["stderr"].strip().splitlines()
        errors = [i for i, line in enumerate(lines) if line.startswith("Error")]
        res["error"] = " ".join(lines[errors[0] : errors[0] + 2] if errors else lines[-1:])
        return res
    if fitter == "ours":
        line = json.loads(res["stdout"].strip().splitlines()[-1])
        res["seconds"], res["edf"] = line["seconds"], line["edf"]
    else:
        parts = res["stdout"].split()
        res["seconds"], res["edf"] = float(parts[0]), [round(float(v), 3) for v in parts[1:]]
    return res


def describe(fitter: str, res: dict) -> str:
    if res.get("timeout"):
        return f"{fitter:6s} stopped after {res['wall']:.0f} s (load {res['load']:.2f})"
    if "error" in res:
        return f"{fitter:6s} failed: {res['error']}"
    return (
        f"{fitter:6s} {res['seconds']:9.2f} s  peak RSS {res['rss_mb']:8.0f} MB  "
        f"(child wall {res['wall']:.1f} s, CPU {res['cpu']:.1f} s, load {res['load']:.2f})  "
        f"EDF {res['edf']}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--sizes", default="362,2000,20000,100000", help="participants, comma-separated"
    )
    ap.add_argument("--per", type=int, default=10, help="ratings per participant")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--r-max", type=int, default=20000, help="largest size R is run at")
    ap.add_argument("--bam-max", type=int, default=2000, help="largest size bam is run at")
    ap.add_argument("--gam-max", type=int, default=362, help="largest size gam is run at")
    ap.add_argument("--r-timeout", type=float, default=900.0)
    ap.add_argument("--no-r", action="store_true")
    ap.add_argument(
        "--r-fitters", default="gamm4,gamm4c,bam,gam", help="which R fits to run (comma-separated)"
    )
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker)
        return
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    have_r = not args.no_r and shutil.which("Rscript") is not None
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()}")
    if have_r:
        blas = subprocess.run(
            ["Rscript", "-e", "cat(extSoftVersion()[['BLAS']])"], capture_output=True, text=True
        ).stdout.strip()
        print(f"R BLAS: {blas}; OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}")
    with tempfile.TemporaryDirectory() as tmp:
        scripts = {"bam": Path(tmp) / "bam.R"}
        scripts["bam"].write_text(R_BAM)
        scripts["gam"] = Path(tmp) / "gam.R"
        scripts["gam"].write_text(R_GAM)
        for name, random in GAMM4_RANDOM.items():
            scripts[name] = Path(tmp) / f"{name}.R"
            scripts[name].write_text(R_GAMM4.replace("RANDOM", random))
        for size in sizes:
            data = simulate(size, args.per)
            csv = Path(tmp) / f"d{size}.csv"
            data.to_csv(csv, index=False)
            fitters = ["ours"]
            wanted = args.r_fitters.split(",")
            if have_r and size <= args.r_max:
                fitters += [f for f in ("gamm4", "gamm4c") if f in wanted]
                fitters += ["bam"] if "bam" in wanted and size <= args.bam_max else []
                fitters += ["gam"] if "gam" in wanted and size <= args.gam_max else []
            print(f"\n{size} participants x {args.per} = {len(data)} ratings")
            results: dict[str, list[dict]] = {f: [] for f in fitters}
            for rep in range(args.repeat):
                order = fitters[rep % len(fitters) :] + fitters[: rep % len(fitters)]
                for fitter in order:
                    res = measure(fitter, csv, scripts, args.r_timeout)
                    results[fitter].append(res)
                    print("  " + describe(fitter, res), flush=True)
            ok = [r["seconds"] for r in results["ours"] if "seconds" in r]
            if not ok:
                continue
            ours = float(np.median(ok))
            rss = max(r["rss_mb"] for r in results["ours"] if "rss_mb" in r)
            line = f"  median ours {ours:.2f} s, peak RSS {rss:.0f} MB"
            for fitter in fitters[1:]:
                secs = [r["seconds"] for r in results[fitter] if "seconds" in r]
                if secs:
                    mem = max(r["rss_mb"] for r in results[fitter] if "seconds" in r) / rss
                    line += (
                        f"; {fitter}/ours time {float(np.median(secs)) / ours:.1f}x, "
                        f"memory {mem:.1f}x"
                    )
                elif any(r.get("timeout") for r in results[fitter]):
                    line += f"; {fitter}/ours > {args.r_timeout / ours:.0f}x (stopped)"
            print(line)
    print(f"\nload average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
