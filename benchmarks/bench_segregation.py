"""Wall time and peak memory of the three exact segregation indices at several n.

    .venv/bin/python benchmarks/bench_segregation.py                 # n = 10k, 100k, 150k
    .venv/bin/python benchmarks/bench_segregation.py --data coded    # 5-level items: ties
    .venv/bin/python benchmarks/bench_segregation.py --data carloan  # synthetic car-loan pool
    .venv/bin/python benchmarks/bench_segregation.py --sizes 1000000 --backend torch --device cuda

Each size runs in a fresh subprocess so that its peak resident memory (ru_maxrss)
is its own. The population is uniform on [0, 1]^d (seeded) with a minority share
of 0.4, or (`--data coded`) segregated 5-level coded items full of distance ties, or
(`--data carloan`) the synthetic car-loan pool on its normalised scale; all indices are computed on every pair (nothing is subsampled). Stage
times come from the progress callback; "kmeans" is the fit + assignment of the 30
neighbourhoods for the Atkinson index. The machine load (os.getloadavg) and the
process's CPU time (user + system, all threads, whole process) are printed beside
the figures because the CPU may be shared: wall time ≈ CPU time / cores only on
an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def population(n: int, d: int, share: float, kind: str):
    """`uniform`: U[0,1]^d, groups drawn independently of X (no segregation).
    `coded`: d ordinal items of 5 levels on the (code-1)/4 scale, the minority's codes
    shifted up by one level on half the items -- segregated, with many exact distance ties
    (the case that sends pairs to the canonical recomputation).
    `carloan`: the seeded synthetic car-loan pool (16 items, 19 columns on the schema's
    normalised scale), women and men (the few 'Other' left out) -- what a study's population is like."""
    import numpy as np

    if kind == "carloan":
        from recourse_engine import carloan_schema, normalise, synth_pool

        schema = carloan_schema()
        frame = synth_pool(schema, n=int(n * 1.05) + 100, seed=0)
        frame = frame[frame["gender"].isin(["Female", "Male"])].head(n)  # two groups
        X = normalise(schema, frame[list(schema.keys)].to_numpy(dtype=float))
        return X, frame["gender"].astype(str).to_numpy()
    rng = np.random.default_rng(0)
    minority = rng.random(n) < share
    g = np.where(minority, "minority", "majority")
    if kind == "uniform":
        return rng.random((n, d)), g
    codes = rng.integers(0, 5, (n, d))
    shift = np.zeros(d, dtype=int)
    shift[: d // 2] = 1
    codes = np.minimum(codes + minority[:, None] * shift[None, :], 4)
    return codes / 4.0, g


def one(
    n: int, d: int, share: float, backend: str, device: str | None, jobs: int | None, kind: str
) -> dict:
    sys.path.insert(0, str(ROOT))
    from analysis.segregation.indices import fit_units, segregation_indices, unit_labels

    X, g = population(n, d, share, kind)
    t0 = time.perf_counter()
    km = fit_units(X, 30, 0)
    unit_labels(km, X)
    t_km = time.perf_counter() - t0
    stages: dict[str, float] = {}

    def progress(stage: str, done: int, total: int) -> None:
        if done == total:
            stages[stage] = time.perf_counter()

    load_before = os.getloadavg()[0]
    t1 = time.perf_counter()
    r = segregation_indices(
        X, g, kmeans=km, backend=backend, device=device, n_jobs=jobs, progress=progress
    )
    t_pairs = time.perf_counter() - t1
    marks, prev = {}, t1
    for stage, t in sorted(stages.items(), key=lambda kv: kv[1]):
        marks[stage] = round(t - prev, 2)
        prev = t
    use = resource.getrusage(resource.RUSAGE_SELF)
    peak_mb = use.ru_maxrss / 1024
    cpu_s = use.ru_utime + use.ru_stime
    return {
        "n": n,
        "d": int(X.shape[1]),
        "data": kind,
        "n_minority": r.n_minority,
        "backend": backend,
        "device": device or "cpu",
        "kmeans_s": round(t_km, 2),
        "pair_indices_s": round(t_pairs, 2),
        "total_s": round(t_km + t_pairs, 2),
        "stages_s": marks,
        "peak_rss_mb": round(peak_mb),
        "process_cpu_s": round(cpu_s, 1),
        "load_1min_before": load_before,
        "load_1min_after": os.getloadavg()[0],
        "eps": r.eps,
        **r.values,
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sizes", default="10000,100000,150000")
    p.add_argument("--d", type=int, default=10)
    p.add_argument("--share", type=float, default=0.4)
    p.add_argument("--backend", default="numpy", choices=("numpy", "torch"))
    p.add_argument("--device")
    p.add_argument("--jobs", type=int)
    p.add_argument("--data", default="uniform", choices=("uniform", "coded", "carloan"))
    p.add_argument("--one", type=int, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.one:
        print(json.dumps(one(a.one, a.d, a.share, a.backend, a.device, a.jobs, a.data)))
        return 0
    print(f"cpus available: {len(os.sched_getaffinity(0))}; load before: {os.getloadavg()}")
    for n in (int(s) for s in a.sizes.split(",")):
        cmd = [
            sys.executable,
            __file__,
            "--one",
            str(n),
            "--d",
            str(a.d),
            "--share",
            str(a.share),
            "--backend",
            a.backend,
            "--data",
            a.data,
        ]
        if a.device:
            cmd += ["--device", a.device]
        if a.jobs:
            cmd += ["--jobs", str(a.jobs)]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode:
            print(f"n={n}: failed\n{done.stderr}")
            return 1
        print(done.stdout.strip(), flush=True)
    print(f"load after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
