"""Wall time, CPU time, peak memory and the distance to the flop bound of the three exact
segregation indices at several n.

    .venv/bin/python benchmarks/bench_segregation.py                 # n = 20k, 150k (d = 19)
    .venv/bin/python benchmarks/bench_segregation.py --million       # ... and 1M on the CPU (hours)
    .venv/bin/python benchmarks/bench_segregation.py --data coded    # 5-level items: ties
    .venv/bin/python benchmarks/bench_segregation.py --data carloan  # synthetic car-loan pool
    .venv/bin/python benchmarks/bench_segregation.py --sizes 1000000 --backend torch --device cuda
    .venv/bin/python benchmarks/bench_segregation.py --kernel-ns     # cross pass alone, ns/pair

The backend is `auto` (torch on a GPU when torch sees one, else numba's compiled cross pass
where numba is installed, else numpy on the CPU cores);
with a GPU, n = 1,000,000 is added to the sizes (issue 35: 1M exact within 60 s), without
one the run says so and leaves it out unless `--million` asks for it.

Each size runs in a fresh subprocess so that its peak resident memory (ru_maxrss)
is its own. The population is uniform on [0, 1]^d (seeded) with a minority share
of 0.4, or (`--data coded`) segregated 5-level coded items full of distance ties, or
(`--data carloan`) the synthetic car-loan pool on its normalised scale; all indices are computed on every pair (nothing is subsampled). Stage
times (wall and process CPU) come from the progress callback; "kmeans" is the fit +
assignment of the 30 neighbourhoods for the Atkinson index. The machine load
(os.getloadavg) and the process's CPU time (user + system, all threads) are printed
beside the figures because the CPU may be shared: wall time ≈ CPU time / cores only on
an otherwise idle machine, and on a loaded one the wall time is inflated by the other
jobs' share; CPU / cores is then the better estimate of an idle machine's wall time
(itself somewhat inflated: other jobs also evict the caches).

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

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def population(n: int, d: int, share: float, kind: str):
    """`uniform`: U[0,1]^d, groups drawn independently of X (no segregation).
    `coded`: d ordinal items of 5 levels on the (code-1)/4 scale, the minority's codes
    shifted up by one level on half the items -- segregated, with many exact distance ties
    (the case that sends pairs to the canonical recomputation).
    `carloan`: the seeded synthetic car-loan pool (16 items, 19 columns on the schema's
    normalised scale), women and men (the few 'Other' left out) -- what a study's population is like."""
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


def peak_gflops_gpu(device: str, size: int = 8192, repeats: int = 5) -> float:
    """The best rate of a square torch float64 matmul on the GPU (GFLOP/s)."""
    import torch

    a = torch.rand(size, size, dtype=torch.float64, device=device)
    b = torch.rand(size, size, dtype=torch.float64, device=device)
    a @ b
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        a @ b
        torch.cuda.synchronize()
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
    from analysis.segregation.indices import fit_units, make_ops, segregation_indices, unit_labels

    X, g = population(n, d, share, kind)
    t0 = time.perf_counter()
    km = fit_units(X, 30, 0)
    unit_labels(km, X)
    t_km = time.perf_counter() - t0
    stages: dict[str, tuple[float, float]] = {}

    def progress(stage: str, done: int, total: int) -> None:
        if done == total:
            stages[stage] = (time.perf_counter(), time.process_time())

    load_before = os.getloadavg()[0]
    c1 = time.process_time()
    t1 = time.perf_counter()
    r = segregation_indices(
        X, g, kmeans=km, backend=backend, device=device, n_jobs=jobs, progress=progress, want=want
    )
    t_pairs = time.perf_counter() - t1
    cpu_pairs = time.process_time() - c1
    marks, cpu_marks, prev, prev_cpu = {}, {}, t1, c1
    for stage, (t, c) in sorted(stages.items(), key=lambda kv: kv[1]):
        marks[stage], cpu_marks[stage] = round(t - prev, 2), round(c - prev_cpu, 2)
        prev, prev_cpu = t, c
    use = resource.getrusage(resource.RUSAGE_SELF)
    peak_mb = use.ru_maxrss / 1024
    cpu_s = use.ru_utime + use.ru_stime
    return {
        "n": n,
        "d": int(X.shape[1]),
        "data": kind,
        "n_minority": r.n_minority,
        "backend": backend,
        "device": str(getattr(make_ops(backend, device, jobs), "device", "cpu")),
        "kmeans_s": round(t_km, 2),
        "pair_indices_s": round(t_pairs, 2),
        "pair_indices_cpu_s": round(cpu_pairs, 2),
        "total_s": round(t_km + t_pairs, 2),
        "stages_s": marks,
        "stages_cpu_s": cpu_marks,
        "peak_rss_mb": round(peak_mb),
        "process_cpu_s": round(cpu_s, 1),
        "load_1min_before": load_before,
        "load_1min_after": os.getloadavg()[0],
        "eps": r.eps,
        **r.values,
    }


def kernel_ns(d: int, share: float, repeats: int = 3) -> None:
    """The minority × majority pass alone (counts within ε and proximity) on the first
    16,000 people, one thread, numpy's blocks and numba's kernel alternating: process CPU
    nanoseconds per pair (the compile or cache load of the kernel is timed apart)."""
    sys.path.insert(0, str(ROOT))
    from analysis.segregation import backends, geometry, passes
    from analysis.segregation.indices import segregation_indices

    X, g = population(16_000, d, share, "uniform")
    eps = segregation_indices(X, g, want=("centralization",)).eps
    is_min = g == "minority"
    geo = geometry.make_geometry(X)
    ri, ci = np.flatnonzero(is_min), np.flatnonzero(~is_min)
    pairs = len(ri) * len(ci)
    t = time.perf_counter()
    from analysis.segregation.fused import cross_counts_and_sums  # imports numba

    print(f"numba import {time.perf_counter() - t:.2f} s")
    t = time.perf_counter()
    cross_counts_and_sums(X, ri[:8], ci, eps, True, 1)
    print(
        f"numba kernel: first call (compile, or load from its cache) {time.perf_counter() - t:.2f} s"
    )
    results: dict[str, list[float]] = {"numpy": [], "numba": []}
    for _ in range(repeats):
        for backend in results:
            c = time.process_time()
            out = passes.cross_pass(backends.make_ops(backend, n_jobs=1), geo, ri, ci, eps, True)
            results[backend].append((time.process_time() - c) / pairs * 1e9)
            print(
                f"  {backend}: {results[backend][-1]:.2f} ns/pair (CPU), "
                f"counts {int(out[0].sum())}, proximity {out[1] / pairs:.15f}",
                flush=True,
            )
    print(
        f"cross pass, {len(ri):,} × {len(ci):,} pairs, one thread, load {os.getloadavg()[0]:.1f}: "
        + "; ".join(f"{b} {min(v):.2f}–{max(v):.2f} ns/pair" for b, v in results.items())
    )


def _child(cmd: list[str], n: int) -> dict | None:
    """One size in a fresh process (its own peak memory); None, with its error, on failure."""
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode:
        print(f"n={n}: failed\n{done.stderr}", flush=True)
        return None
    return json.loads(done.stdout)


def _compare(cmd: list[str], n: int, backend: str, row: dict) -> bool | None:
    """Run the same size on `backend` on the CPU and print whether the results agree: ε and
    the count-based indices (centralization, Atkinson: ratios of whole counts) exactly, the
    average proximity (a float sum in another order) to 1e-12 relative."""
    other = list(cmd)
    other[other.index("--backend") + 1] = backend
    if "--device" in other:
        at = other.index("--device")
        del other[at : at + 2]
    ref = _child(other, n)
    if ref is None:
        return None
    exact = ("eps", "centralization", "atkinson")
    same = {k: row.get(k) == ref.get(k) for k in exact if k in row}
    prox = [k for k in row if k.startswith("proximity") or k == "avg_proximity"]
    rel = {k: abs(row[k] - ref[k]) / max(abs(ref[k]), 1e-300) for k in prox if k in ref}
    ok = all(same.values()) and all(v <= 1e-12 for v in rel.values())
    print(
        f"n={n:,} compared with {backend} on the CPU ({ref['pair_indices_s']:.1f} s wall, "
        f"{ref['pair_indices_cpu_s']:.1f} s CPU): "
        + ", ".join(f"{k} {'equal' if v else 'DIFFERENT'}" for k, v in same.items())
        + "".join(f", {k} relative difference {v:.1e}" for k, v in rel.items())
        + (" -- AGREE" if ok else " -- DISAGREE"),
        flush=True,
    )
    print(json.dumps({"compare": backend, **ref}), flush=True)
    return ok


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sizes", default="20000,150000")
    p.add_argument(
        "--million", action="store_true", help="add n = 1,000,000 also without a GPU (hours)"
    )
    p.add_argument("--d", type=int, default=19)
    p.add_argument("--share", type=float, default=0.4)
    p.add_argument("--backend", default="auto", choices=("numpy", "numba", "torch", "auto"))
    p.add_argument("--device")
    p.add_argument("--jobs", type=int)
    p.add_argument("--data", default="uniform", choices=("uniform", "coded", "carloan"))
    p.add_argument("--want", help="comma-separated indices (default: all), e.g. centralization")
    p.add_argument("--kernel-ns", action="store_true", help="the cross pass alone, ns per pair")
    p.add_argument(
        "--compare",
        choices=("numpy", "numba", "torch"),
        help="also run each size on this backend (CPU) and compare: ε and the count-based "
        "indices must be equal, proximity to rounding",
    )
    p.add_argument(
        "--compare-up-to",
        type=int,
        default=None,
        help="compare only the sizes up to this n (a CPU run of 1M takes long)",
    )
    p.add_argument("--one", type=int, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.kernel_ns:
        kernel_ns(a.d, a.share)
        return 0
    if a.one:
        want = tuple(a.want.split(",")) if a.want else None
        print(json.dumps(one(a.one, a.d, a.share, a.backend, a.device, a.jobs, a.data, want)))
        return 0
    cores = len(os.sched_getaffinity(0))
    print(f"cpus available: {cores}; load before: {os.getloadavg()}")
    sys.path.insert(0, str(ROOT))
    from analysis.segregation.backends import gpu_available

    gpu = a.backend != "numpy" and (a.device not in (None, "cpu") or gpu_available())
    peak = peak_gflops_gpu(a.device or "cuda") if gpu else peak_gflops()
    where = (
        "torch float64 matmul 8192² on the GPU"
        if gpu
        else f"numpy float64 matmul 2000², {cores} cores"
    )
    print(f"assumed peak ({where}, best of 5): {peak:.1f} GFLOP/s", flush=True)
    if not gpu:
        print(f"  float32 on the CPU: {peak_gflops('float32'):.1f} GFLOP/s", flush=True)
    sizes = [int(s) for s in a.sizes.split(",")]
    if (gpu or a.million) and 1_000_000 not in sizes:
        sizes.append(1_000_000)
    elif not gpu:
        print("n=1,000,000: not run (no GPU: torch sees none; --million runs it on the CPU)")
    status = 0
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
        row = _child(cmd, n)
        if row is None:
            return 1
        bound = flop_bound(n, row["n_minority"], row["d"], peak)
        print(json.dumps(row), flush=True)
        cpu = row["pair_indices_cpu_s"]
        print(
            f"n={n:,} d={row['d']} ({row['device']}): pair indices {row['pair_indices_s']:.2f} s "
            f"wall, {cpu:.1f} s CPU (CPU/{cores} cores {cpu / cores:.1f} s); flop bound "
            f"{bound:.2f} s at {peak:.1f} GFLOP/s; ratio wall/bound "
            f"{row['pair_indices_s'] / bound:.1f}, CPU/(bound·{cores}) {cpu / (bound * cores):.1f}; "
            f"load 1-min {row['load_1min_before']:.2f} → {row['load_1min_after']:.2f}"
            + (" (wall inflated by the load)" if row["load_1min_before"] > cores else ""),
            flush=True,
        )
        wanted = a.compare and (a.compare_up_to is None or n <= a.compare_up_to)
        if wanted and _compare(cmd, n, a.compare, row) is False:
            status = 1
    after = peak_gflops_gpu(a.device or "cuda") if gpu else peak_gflops()
    print(f"assumed peak measured again after the sizes: {after:.1f} GFLOP/s")
    print(f"load after: {os.getloadavg()}")
    return status


if __name__ == "__main__":
    sys.exit(main())
