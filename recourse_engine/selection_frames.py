"""A `Selection` as a pandas data frame (one row per pick), for notebooks and scripts.

`Selection.to_frame(schema=None)` calls `selection_frame`: the columns of the
`recourse-engine recourses` CSV (strategy, pool_id, sparsity, proximity, changed), the
pick's origin, method, ranks and fallback, then the counterfactual's option codes, one
column per item (named by the schema's keys when given, else code_1, code_2, ...).
`frame.attrs` carries requested, n_admissible and shortfall.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from .schema import FeatureSchema
    from .selection import Selection

COLUMNS = [
    "strategy",
    "pool_id",
    "pool_index",
    "sparsity",
    "proximity",
    "changed",
    "origin",
    "method",
    "sparsity_rank",
    "proximity_rank",
    "fallback",
]


def selection_frame(selection: Selection, schema: FeatureSchema | None = None) -> pd.DataFrame:
    """One row per pick, in the selection's order."""
    n_items = len(selection.picks[0].codes) if selection.picks else 0
    keys = list(schema.keys) if schema is not None else [f"code_{j + 1}" for j in range(n_items)]
    if selection.picks and len(keys) != n_items:
        raise ValueError(f"the schema has {len(keys)} items, the picks {n_items} codes")
    rows: list[dict[str, Any]] = []
    for p in selection.picks:
        row: dict[str, Any] = {
            "strategy": p.strategy,
            "pool_id": p.pool_id,
            "pool_index": int(p.pool_index),
            "sparsity": int(p.sparsity),
            "proximity": float(p.proximity),
            "changed": ";".join(p.changed),
            "origin": p.origin,
            "method": p.method,
            "sparsity_rank": int(p.sparsity_rank),
            "proximity_rank": int(p.proximity_rank),
            "fallback": p.fallback,
        }
        row.update({k: p.codes[j].item() for j, k in enumerate(keys)})
        rows.append(row)
    frame = pd.DataFrame(rows, columns=COLUMNS + keys)
    frame.attrs.update(
        requested=selection.requested,
        n_admissible=selection.n_admissible,
        shortfall=selection.shortfall,
    )
    return frame
