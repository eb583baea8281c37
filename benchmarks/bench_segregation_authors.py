"""Our three segregation indices beside the authors' own functions (Gao & Lakkaraju 2023,
`ruijiang81/Balanced-Recourse`, `utils_recourse.py`), alternately in one process, on the
same populations: wall and CPU time of each, their ratio, and the load average.

    git clone https://github.com/ruijiang81/Balanced-Recourse /tmp/balanced-recourse
    .venv/bin/python benchmarks/bench_segregation_authors.py --authors /tmp/balanced-recourse \
        --sizes 2000,5000,10000

The authors' file imports seaborn at the top and CARLA at the bottom, neither of which the
indices need, so the three functions (`centralization`, `avg_proximity2`, `atkinson`) are
taken from its syntax tree and run with numpy, pandas and scikit-learn; nothing of theirs
is copied into this repository. Their functions form dense n × n (or m × n) distance
matrices: memory grows with n², so the sizes stay at 10,000 or below here. Their
centralization carries defect (a) of docs/segregation.md and their Atkinson fits its own
K-Means, so the values differ from ours where the definitions do; the times compare the
same work (every pair's distance; one K-Means of 30 neighbourhoods). Ours: the exact
indices of `analysis.segregation.indices` (backend auto), K-Means included.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WANTED = ("centralization", "avg_proximity2", "atkinson")


def authors_functions(repo: Path) -> dict[str, Any]:
    """The three index functions of the authors' `utils_recourse.py`, compiled alone."""
    source = (repo / "utils_recourse.py").read_text()
    tree = ast.parse(source)
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in WANTED]
    missing = set(WANTED) - {d.name for d in defs}
    if missing:
        raise SystemExit(f"error: {repo / 'utils_recourse.py'} has no {', '.join(sorted(missing))}")
    import pandas as pd
    from sklearn.cluster import KMeans
    from sklearn.metrics import pairwise_distances

    namespace: dict[str, Any] = {"np": np, "pd": pd, "KMeans": KMeans,
                                 "pairwise_distances": pairwise_distances}  # fmt: skip
    exec(compile(ast.Module(body=defs, type_ignores=[]), "utils_recourse.py", "exec"), namespace)  # noqa: S102 - the authors' functions, by path
    return {name: namespace[name] for name in WANTED}


def population(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Uniform [0, 1]^d, 40% minority (as bench_segregation's default population)."""
    rng = np.random.default_rng(seed)
    sens = (rng.random(n) < 0.4).astype(int)
    return rng.random((n, d)), sens


def timed(fn: Any, *args: Any) -> tuple[Any, float, float]:
    c, t = time.process_time(), time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t, time.process_time() - c


def theirs(f: dict[str, Any], X: np.ndarray, sens: np.ndarray) -> dict[str, float]:
    centr, _ = f["centralization"](sens, X)
    return {"centralization": float(centr), "avg_proximity": float(f["avg_proximity2"](sens, X)),
            "atkinson": float(f["atkinson"](sens, X, origin_features=X))}  # fmt: skip


def ours(X: np.ndarray, sens: np.ndarray) -> dict[str, float]:
    from analysis.segregation.indices import segregation_indices

    groups = np.where(sens == 1, "minority", "majority")
    r = segregation_indices(X, groups, backend="auto", eps_quantile=0.1)
    return {k: float(v) for k, v in r.values.items()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--authors", required=True, type=Path, help="a clone of Balanced-Recourse")
    p.add_argument("--sizes", default="2000,5000,10000")
    p.add_argument("--d", type=int, default=19)
    p.add_argument("--repeat", type=int, default=2)
    a = p.parse_args(argv)
    try:
        sizes = [int(s) for s in a.sizes.split(",")]
    except ValueError:
        p.error(f"--sizes: whole numbers separated by commas, got {a.sizes!r}")
    if any(not 100 <= n <= 20_000 for n in sizes):
        p.error("--sizes: each from 100 to 20,000 (the authors' functions hold n x n matrices)")
    if not (a.authors / "utils_recourse.py").is_file():
        p.error(f"--authors: no utils_recourse.py in {a.authors}")
    f = authors_functions(a.authors)
    ours(*population(500, a.d, 1))  # compile and load our kernels before timing
    print(f"cpus {len(os.sched_getaffinity(0))}; load before {os.getloadavg()}", flush=True)
    for n in sizes:
        X, sens = population(n, a.d, 0)
        runs: dict[str, list[tuple[float, float]]] = {"theirs": [], "ours": []}
        values: dict[str, dict[str, float]] = {}
        for _ in range(a.repeat):
            for who in ("theirs", "ours"):
                args = (f, X, sens) if who == "theirs" else (X, sens)
                values[who], wall, cpu = timed(theirs if who == "theirs" else ours, *args)
                runs[who].append((wall, cpu))
        best = {w: min(r) for w, r in runs.items()}
        print(
            f"n={n:,} d={a.d}: theirs {best['theirs'][0]:.2f} s wall ({best['theirs'][1]:.1f} s "
            f"CPU), ours {best['ours'][0]:.2f} s wall ({best['ours'][1]:.1f} s CPU); theirs/ours "
            f"{best['theirs'][0] / best['ours'][0]:.1f}x wall, {best['theirs'][1] / best['ours'][1]:.1f}x "
            f"CPU (best of {a.repeat}, alternating); load {os.getloadavg()[0]:.2f}",
            flush=True,
        )
        for k in ("centralization", "atkinson", "avg_proximity"):
            print(f"    {k}: theirs {values['theirs'][k]:.6f}, ours {values['ours'][k]:.6f}")
    print(f"load after {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
