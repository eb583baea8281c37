"""Wall time, CPU time, peak memory and the distance to the flop bound of the three exact
segregation indices at several n.

    .venv/bin/python benchmarks/bench_segregation.py                 # n = 20k, 150k (d = 19)
    .venv/bin/python benchmarks/bench_segregation.py --million       # ... and 1M (long)
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

The flop bound: every pair costs one product of (d + 2)-long augmented vectors, 2(d + 2)
flops, over m(m − 1)/2 minority pairs and m(n − m) minority × majority pairs; at the
machine's float64 peak, measured in the same run by a numpy matmul of two 2,000 × 2,000
matrices on all cores (best of 5, before and after the sizes), that is the time no exact
method that forms every pair's distance in float64 can beat. "ratio" is the pair
indices' wall time over it (≥ 1; proximity's exp per pair costs more than its product).
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


def peak_gflops(dtype: str = "float64", size: int = 2000, repeats: int = 5) -> float:
    """The best rate of a square numpy matmul on all cores (GFLOP/s): the assumed peak."""
    import numpy as np

    rng = np.random.default_rng(0)
    a, b = rng.random((size, size)).astype(dtype), rng.random((size, size)).astype(dtype)
    a @ b
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t)
    return 2.0 * size**3 / best / 1e9


def flop_bound(n: int, n_min: int, d: int, gflops: float) -> float:
    """Seconds for the pair products alone at `gflops` (see the module docstring)."""
    pairs = n_min * (n_min - 1) // 2 + n_min * (n - n_min)
    return 2.0 * (d + 2) * pairs / (gflops * 1e9)


def one(
    n: int,
    d: int,
    share: float,
    backend: str,
    device: str | None,
    jobs: int | None,
    kind: str,
    want: tuple[str, ...] | None = None,
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
    c1 = time.process_time()
    t1 = time.perf_counter()
    r = segregation_indices(
        X, g, kmeans=km, backend=backend, device=device, n_jobs=jobs, progress=progress, want=want
    )
    t_pairs = time.perf_counter() - t1
    cpu_pairs = time.process_time() - c1
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
        "pair_indices_cpu_s": round(cpu_pairs, 2),
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
    p.add_argument("--sizes", default="20000,150000")
    p.add_argument("--million", action="store_true", help="add n = 1,000,000 (long; use a GPU)")
    p.add_argument("--d", type=int, default=19)
    p.add_argument("--share", type=float, default=0.4)
    p.add_argument("--backend", default="numpy", choices=("numpy", "torch", "auto"))
    p.add_argument("--device")
    p.add_argument("--jobs", type=int)
    p.add_argument("--data", default="uniform", choices=("uniform", "coded", "carloan"))
    p.add_argument("--want", help="comma-separated indices (default: all), e.g. centralization")
    p.add_argument("--one", type=int, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.one:
        want = tuple(a.want.split(",")) if a.want else None
        print(json.dumps(one(a.one, a.d, a.share, a.backend, a.device, a.jobs, a.data, want)))
        return 0
    cores = len(os.sched_getaffinity(0))
    print(f"cpus available: {cores}; load before: {os.getloadavg()}")
    peak = peak_gflops()
    print(
        f"assumed peak (numpy float64 matmul 2000², {cores} cores, best of 5): {peak:.1f} GFLOP/s;"
        f" float32: {peak_gflops('float32'):.1f} GFLOP/s",
        flush=True,
    )
    sizes = [int(s) for s in a.sizes.split(",")] + ([1_000_000] if a.million else [])
    for n in sizes:
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
        if a.want:
            cmd += ["--want", a.want]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode:
            print(f"n={n}: failed\n{done.stderr}")
            return 1
        row = json.loads(done.stdout)
        bound = flop_bound(n, row["n_minority"], row["d"], peak)
        print(json.dumps(row), flush=True)
        print(
            f"n={n:,} d={row['d']}: pair indices {row['pair_indices_s']:.2f} s wall, "
            f"{row['pair_indices_cpu_s']:.1f} s CPU; flop bound {bound:.2f} s at {peak:.1f} "
            f"GFLOP/s; ratio wall/bound {row['pair_indices_s'] / bound:.1f}, CPU/(bound·{cores}) "
            f"{row['pair_indices_cpu_s'] / (bound * cores):.1f}; load 1-min "
            f"{row['load_1min_before']:.2f} → {row['load_1min_after']:.2f}",
            flush=True,
        )
    after = peak_gflops()
    print(f"assumed peak measured again after the sizes: {after:.1f} GFLOP/s")
    print(f"load after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
