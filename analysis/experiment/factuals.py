"""Per-factual results of the experiment (`factuals.csv`): one row per run × method ×
factual, so that tables can stand beside CARLA's benchmark, which reports per factual.

Columns: `run`, `seed`, `method`, `factual` (0.. in the run's factual order), `row` (the
factual's row in the run's loaded data: a held-out row's own number), `group` (0/1), `found` (the method returned a
counterfactual), `valid` (found and the decision model approves it: CARLA's success),
`cost_l1`, `cost_l2` and `cost_linf` (distance on the normalised item scale, `metrics.recourse_cost`),
`sparsity` (changed items, CARLA's L0), `robustness_invalidation` (CARLA's
`InvalidationRate`), `redundancy`, `constraint_violation`. Distances and the CARLA metrics
are empty where nothing was found; robustness invalidation and redundancy are also empty
beyond the first `cap` factuals of a run (they cost model calls per factual).

The run's summary metrics (`cost`, `sparsity`, `robustness_invalidation`, …) are means of
these columns, so the two files cannot disagree.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from recourse_engine.metrics import (
    changed_items,
    constraint_violation,
    found_mask,
    recourse_cost,
    redundancy,
    robustness_invalidation,
)

FACTUAL_COLUMNS = (
    "run",
    "seed",
    "method",
    "factual",
    "row",
    "group",
    "found",
    "valid",
    "cost_l1",
    "cost_l2",
    "cost_linf",
    "sparsity",
    "robustness_invalidation",
    "redundancy",
    "constraint_violation",
)


def factual_frame(
    schema: Any,
    model: Any,
    factuals: np.ndarray,
    counterfactuals: np.ndarray,
    rows: np.ndarray,
    groups: np.ndarray,
    *,
    seed: int,
    cap: int,
) -> pd.DataFrame:
    """The per-factual metrics of one method's counterfactuals (without run and method)."""
    cf = np.asarray(counterfactuals, dtype=float)
    n = len(cf)
    found = found_mask(cf) if n else np.zeros(0, dtype=bool)
    valid = np.zeros(n, dtype=bool)
    if found.any():
        valid[found] = np.asarray(model.approves(cf[found]), dtype=bool)
    k = min(cap, n)
    robust = np.full(n, np.nan)
    redund = np.full(n, np.nan)
    if k:
        robust[:k] = robustness_invalidation(schema, cf[:k], model, seed=seed)
        redund[:k] = redundancy(factuals[:k], cf[:k], model)
    return pd.DataFrame(
        {
            "factual": np.arange(n),
            "row": np.asarray(rows, dtype=int),
            "group": np.asarray(groups, dtype=int),
            "found": found,
            "valid": valid,
            "cost_l1": recourse_cost(schema, factuals, cf, "l1") if n else [],
            "cost_l2": recourse_cost(schema, factuals, cf, "l2") if n else [],
            "cost_linf": recourse_cost(schema, factuals, cf, "linf") if n else [],
            "sparsity": changed_items(factuals, cf) if n else [],
            "robustness_invalidation": robust,
            "redundancy": redund,
            "constraint_violation": constraint_violation(schema, factuals, cf) if n else [],
        }
    )


def column_mean(frame: pd.DataFrame, column: str) -> float:
    """Mean of a per-factual column over the rows where it is defined (NaN if none)."""
    v = frame[column].to_numpy(dtype=float)
    v = v[~np.isnan(v)]
    return float(v.mean()) if len(v) else math.nan
