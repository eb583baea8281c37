"""How often a ranked pick's label is false: the issue's measurement (issue 13, item 2).

A "proximate" recourse is labelled falsely when some admissible candidate is strictly more
proximate than it (rounded as the engine ranks). It is *avoidable* when another choice of
distinct profiles would have made both the sparsest and the proximate pick minimal, i.e.
when some admissible profile is minimal in sparsity without being the only profile minimal
in proximity. Counted over synthetic car-loan participants, each with its own seed as the
command line's `recourses --seed S` does (profile i: the seed sequence (S, i)).

    .venv/bin/python benchmarks/bench_labels.py [--profiles 60] [--seed 0] [--design ...]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from recourse_engine import PoolIndex, carloan_schema, pool_from_frame, synth_pool  # noqa: E402
from recourse_engine.distances import RANK_DECIMALS  # noqa: E402

DESIGN = "sparsest:1,proximate:1,random:3"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--profiles", type=int, default=60)
    ap.add_argument("--design", default=DESIGN)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    schema = carloan_schema()
    index = PoolIndex(schema, pool_from_frame(synth_pool(schema, n=3683, seed=0), schema))
    profiles = synth_pool(schema, n=args.profiles, seed=1)
    false_label = avoidable = both = with_pick = 0
    for i in range(len(profiles)):
        x = profiles.loc[i, schema.keys].to_numpy(float)
        income = float(profiles.loc[i, "income"])
        sel = index.select(x, income, args.design, seed=[args.seed, i])
        cand = index.candidates(x, income)
        prox = np.round(cand.proximity, RANK_DECIMALS)
        proximate = [p for p in sel.picks if p.strategy == "proximate"]
        if not proximate:
            continue
        with_pick += 1
        best = prox.min()
        if round(proximate[0].proximity, RANK_DECIMALS) > best:
            false_label += 1
            # the most proximate profiles, and the profiles that are sparsest
            top = set(cand.keys[prox == best].tolist())
            sparsest = set(cand.keys[cand.sparsity == cand.sparsity.min()].tolist())
            if len(top) > 1 or sparsest - top:
                avoidable += 1
        sparse_pick = [p for p in sel.picks if p.strategy == "sparsest"][0]
        if getattr(sparse_pick, "proximity_rank", None) == 1:
            both += 1
    print(f"design={args.design} participants={len(profiles)} with a proximate pick={with_pick}")
    print(f"false 'proximate' label: {false_label} (avoidable with distinct picks: {avoidable})")
    print(f"sparsest pick marked as also most proximate (proximity_rank 1): {both}")


if __name__ == "__main__":
    main()
