"""fair_rl's training time and generation speed (a benchmark, not a test).

Loads a dataset (seed 0; Adult by default, `--subsample` rows of it), trains the
experiment's decision model, fits `FairRL` with the given reward and budget, then times:

* generation for all rejected rows in one batch (median of `--repeats` batches), i.e.
  counterfactuals per second after training;
* one participant at a time: `--single` calls with one factual each (median and p95), from
  a fitted method that was pickled and loaded back, as a study stores it;
* the success rate and proportion difference of the batch, to show what was timed;
  `--untrained`: the same with the initial, untrained actor (the ablation: what the
  noisy rollouts find on their own), and `--rollouts 1` the policy's mean action alone.

`late_success` (printed with the fit) is the success share of the training episodes that
started in the last quarter of training and could finish (`fair_rl_sac.train_sac`);
`late_episodes` says how many it counts. The batch is the rows the model rejects in the
same data the policy was trained on: in-sample, a speed figure only (held-out scores come
from `python -m analysis experiment`).

Prints the load average before and after, since the machine is shared.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_fair_rl.py [--dataset adult]
        [--subsample 10000] [--reward hybrid] [--steps 1500] [--clusters 0]
        [--threads 1] [--device cpu|cuda] [--untrained] [--rollouts 16]
"""

from __future__ import annotations

import argparse
import os
import pickle
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", default="adult")
    ap.add_argument("--subsample", type=int, default=10_000)
    ap.add_argument("--reward", default="hybrid")
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--clusters", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--single", type=int, default=50)
    ap.add_argument("--threads", type=int, default=1, help="torch threads while training")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--untrained", action="store_true", help="skip training (the ablation)")
    ap.add_argument("--rollouts", type=int, default=16, help="rollouts per factual")
    args = ap.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    torch.zeros(1) @ torch.zeros(1)  # warm up

    from analysis.experiment.run import train_decision_model
    from recourse_engine.datasets import load_dataset
    from recourse_engine.methods.fair_rl import FairRL
    from recourse_engine.metrics import success_rates

    data = load_dataset(args.dataset, seed=0, subsample=args.subsample)
    model = train_decision_model(data, 0)
    rejected = ~np.asarray(model.approves(data.codes), dtype=bool)
    factuals = data.codes[rejected]
    print(f"load average before: {os.getloadavg()}; torch threads {args.threads}")
    print(
        f"{args.dataset}: {len(data)} rows, {len(factuals)} rejected; reward {args.reward}, "
        f"{args.steps} steps, clusters {args.clusters}, device {args.device}, "
        f"untrained {args.untrained}, rollouts {args.rollouts}"
    )
    method = FairRL(
        seed=0,
        reward=args.reward,
        steps=args.steps,
        clusters=args.clusters,
        device=args.device,
        threads=args.threads,
        untrained=args.untrained,
        rollouts=args.rollouts,
    )
    t0 = time.perf_counter()
    method.fit(data, model)
    print(f"fit: {time.perf_counter() - t0:.1f} s ({method.train_stats_})")
    times = []
    for _ in range(args.repeats):
        res = method.get_counterfactuals(factuals)
        times.append(res.seconds)
    med = float(np.median(times))
    per, gap = success_rates(res.valid, data.group[rejected])
    print(
        f"batch of {len(factuals)}: median {med:.3f} s, {len(factuals) / med:.0f} cf/s; "
        f"success {res.valid.mean():.3f}, per group {per}, PD {gap:.3f}"
    )
    blob = pickle.dumps(method)
    loaded = pickle.loads(blob)
    single = []
    for i in range(min(args.single, len(factuals))):
        t1 = time.perf_counter()
        loaded.get_counterfactuals(factuals[i : i + 1])
        single.append(time.perf_counter() - t1)
    ms = np.array(single) * 1000
    print(
        f"one participant (pickled {len(blob) / 1024:.0f} KiB, loaded): median "
        f"{np.median(ms):.1f} ms, p95 {np.percentile(ms, 95):.1f} ms, max {ms.max():.1f} ms"
    )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
