"""Per-profile recourse selection latency on synthetic car-loan pools.

Prints, for each pool size, the one-off index time and the median and p95 latency
of selecting the reference design (sparsest:1,proximate:1,random:3) for factual
profiles drawn like the study's participants (income below JPY 10M).

    .venv/bin/python benchmarks/bench_selection.py [--sizes 3683,100000,1000000] [--profiles 200]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from recourse_engine import PoolIndex, carloan_schema, pool_from_frame, synth_pool  # noqa: E402

DESIGN = "sparsest:1,proximate:1,random:3"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="3683,100000,1000000")
    ap.add_argument("--profiles", type=int, default=200)
    ap.add_argument("--design", default=DESIGN)
    args = ap.parse_args()
    schema = carloan_schema()
    factuals = synth_pool(schema, n=5 * args.profiles, seed=12345)
    factuals = factuals[factuals["income"] < 10_000_000].head(args.profiles)
    x = factuals[schema.keys].to_numpy(float)
    income = factuals["income"].to_numpy(float)
    print(f"cpus={os.cpu_count()} load={os.getloadavg()[0]:.2f} design={args.design}")
    print(f"{'pool':>10} {'index s':>8} {'median ms':>10} {'p95 ms':>8} {'max ms':>8} {'admissible':>11}")
    for n in (int(s) for s in args.sizes.split(",")):
        frame = synth_pool(schema, n=n, seed=0)
        pool = pool_from_frame(frame, schema)
        t0 = time.perf_counter()
        index = PoolIndex(schema, pool)
        t_index = time.perf_counter() - t0
        times, adm = [], []
        index.select(x[0], income[0], args.design, seed=0)  # warm-up
        for i in range(len(x)):
            t = time.perf_counter()
            sel = index.select(x[i], income[i], args.design, seed=i)
            times.append((time.perf_counter() - t) * 1000)
            adm.append(sel.n_admissible)
        ms = np.array(times)
        print(
            f"{n:>10} {t_index:>8.2f} {np.median(ms):>10.2f} {np.percentile(ms, 95):>8.2f} "
            f"{ms.max():>8.2f} {int(np.median(adm)):>11}"
        )
    print(f"load after={os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
