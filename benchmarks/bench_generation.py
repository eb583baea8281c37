"""Per-participant recourse generation latency with recourse methods as study strategies.

On a synthetic car-loan pool (default 100,000 profiles) decided by a logistic regression on
the profile items (label: income in the pool's top half, as the demo comparison study),
each method is fitted once on the whole pool (the go-live task's work; its time is printed
but is not a participant's wait), then for each method the design
`proximate:1,<method>:1,random:1` is selected for participants the model rejects: the
worker's computation between the profile's submission and the stored recourses, less the
database write. A pool-only design is timed the same way. Printed: median, p95 and max per
design, and how often the method's own counterfactual was shown (the rest fell back).

    .venv/bin/python benchmarks/bench_generation.py [--pool 100000] [--profiles 100] [--epochs 10]

`--epochs` shortens the training of the methods that take it (the VAE methods CCHVAE, CRUDS,
IBR): it changes their fit time and quality, not the work of generating one counterfactual, which is what is timed.
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
from recourse_engine.decision import train_sklearn_model  # noqa: E402
from recourse_engine.generated import (  # noqa: E402
    Generator,
    fit_on_pool,
    method_class,
    method_settings,
)
from recourse_engine.strategies import get_strategy, method_names  # noqa: E402

SCM = {"position": {"education": 0.3, "service_years": 0.3}, "management_career": {"position": 0.5}}


def _design_name(method: str) -> str:
    return method if get_strategy(method).generates == method else f"{method}_generated"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pool", type=int, default=100_000)
    ap.add_argument("--profiles", type=int, default=100)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--methods", default=",".join(method_names()))
    args = ap.parse_args()
    schema = carloan_schema()
    pool = pool_from_frame(synth_pool(schema, n=args.pool, seed=0), schema)
    pool.extra["approved"] = (pool.income >= np.median(pool.income)).astype(int)
    model = train_sklearn_model(schema, pool, "approved")
    index = PoolIndex(schema, pool, model)
    people = pool_from_frame(synth_pool(schema, n=20 * args.profiles, seed=12345), schema)
    rejected = people.codes[~model.approves(people.codes)][: args.profiles]
    print(
        f"cpus={os.cpu_count()} load={os.getloadavg()[0]:.2f} pool={args.pool} "
        f"profiles={len(rejected)} epochs={args.epochs}"
    )
    print(f"{'design':<44} {'fit s':>7} {'median ms':>10} {'p95 ms':>8} {'max ms':>8} {'own':>5}")
    _time(index, rejected, "proximate:1,random:1", {}, "-")
    for name in args.methods.split(","):
        raw: dict = {}
        cls = method_class(name)
        if "epochs" in cls.study_params():
            raw["epochs"] = args.epochs
        if cls.capabilities.scm:
            raw["scm"] = SCM
        settings = method_settings(name, raw, schema)
        t0 = time.perf_counter()
        method = fit_on_pool(settings, schema, pool, model)
        fit_s = f"{time.perf_counter() - t0:.1f}"
        gens = {name: Generator(settings, method)}
        _time(index, rejected, f"proximate:1,{_design_name(name)}:1,random:1", gens, fit_s)
    print(f"load after={os.getloadavg()[0]:.2f}")


def _time(index: PoolIndex, xs: np.ndarray, design: str, gens: dict, fit_s: str) -> None:
    index.select(xs[0], None, design, seed=0, generators=gens)  # warm-up
    times, own = [], 0
    for i, x in enumerate(xs):
        t = time.perf_counter()
        sel = index.select(x, None, design, seed=i, generators=gens)
        times.append((time.perf_counter() - t) * 1000)
        own += sum(p.origin == "generated" for p in sel.picks)
    ms = np.array(times)
    print(
        f"{design:<44} {fit_s:>7} {np.median(ms):>10.1f} {np.percentile(ms, 95):>8.1f} "
        f"{ms.max():>8.1f} {own:>3}/{len(xs)}"
    )


if __name__ == "__main__":
    main()
