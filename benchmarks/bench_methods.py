"""Fitting time and counterfactuals per second of every recourse method (batched).

On the seed paper's synthetic data (seed 0; logistic decision model), or with `--dataset` a
real one (seed 0: its 10,000-row subsample where it is larger; the experiment's MLP): each
method is fitted with its default settings, then asked for the counterfactuals of all
rejected rows in one batch (400 factuals on the synthetic data), `--repeats` times; the
median batch time gives counterfactuals/s. torch is imported and warmed up before any
timing. Prints the load average beside the figures, since the machine is shared.

    .venv/bin/python benchmarks/bench_methods.py [--methods ebr,ibr,...] [--repeats 3]
        [--threads 1] [--dataset synthetic|german|gmc|law_sex|...]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--methods", default="wachter,gs,ebr,cchvae,ibr,cruds")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1, help="torch threads")
    ap.add_argument("--dataset", default="synthetic", help="synthetic or a real dataset")
    args = ap.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    torch.zeros(1) @ torch.zeros(1)  # warm up

    from analysis.experiment.run import train_decision_model
    from recourse_engine.datasets import load_dataset
    from recourse_engine.methods import get_method

    data = load_dataset(args.dataset, seed=0)
    model = train_decision_model(data, 0)
    factuals = data.codes[~model.approves(data.codes)]
    print(f"load average before: {os.getloadavg()}; torch threads {args.threads}")
    print(f"{args.dataset}: {len(factuals)} factuals per batch, median of {args.repeats} batches\n")
    print(f"{'method':<10}{'fit s':>9}{'batch s':>10}{'cf/s':>10}{'valid':>8}")
    for name in args.methods.split(","):
        method = get_method(name, seed=0)
        t0 = time.perf_counter()
        method.fit(data, model)
        fit = time.perf_counter() - t0
        times, valid = [], 0.0
        for _ in range(args.repeats):
            res = method.get_counterfactuals(factuals)
            times.append(res.seconds)
            valid = res.valid.mean()
        med = float(np.median(times))
        print(f"{name:<10}{fit:>9.2f}{med:>10.3f}{len(factuals) / med:>10.0f}{valid:>8.3f}")
    print(f"\nload average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
