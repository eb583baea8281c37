"""Populations and indices rebuilt by hand from an export's CSVs: the effects tests' reference
for what `analysis.segregation.effects` computes from the same files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from recourse_engine import carloan_schema, normalise

from . import slow_reference as ref


def populations(directory: Path, column: str, value: str) -> tuple[np.ndarray, ...]:
    """Original and after-recourse profiles and the minority mask: the first-displayed
    recourse of each participant among the rows whose `column` equals `value`."""
    schema = carloan_schema()
    pa = pd.read_csv(directory / "participants.csv", dtype={"participant": str})
    pa = pa.dropna(subset=[f"x_{k}" for k in schema.keys]).sort_values("participant")
    X0 = normalise(schema, pa[[f"x_{k}" for k in schema.keys]].to_numpy(float))
    ev = pd.read_csv(directory / "evaluations.csv", dtype={"participant": str})
    X1 = X0.copy()
    for r, pid in enumerate(pa["participant"]):
        mine = ev[(ev["participant"] == pid) & (ev[column].astype(str) == value)]
        if len(mine):
            first = mine.loc[mine["position"].idxmin()]
            X1[r] = normalise(schema, first[[f"cf_{k}" for k in schema.keys]].to_numpy(float))[0]
    return X0, X1, pa["gender"].to_numpy() == "female"


def slow_indices(X: np.ndarray, is_min: np.ndarray, eps: float, units: np.ndarray) -> dict:
    return {
        "centralization": ref.centralization(X, is_min, eps),
        "atkinson": ref.atkinson(is_min, units),
        "avg_proximity": ref.avg_proximity(X, is_min),
    }
