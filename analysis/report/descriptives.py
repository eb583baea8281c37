"""Each rating per condition x arm (strategy or method): n, mean, SD, median and the
distribution over the scale, over every evaluation of the participants reported on (the
models' exclusions are counted in the flow and the model section, not here: a reader sees
the data before anyone chose among it)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import contract as c

NO_CONDITION = "(none)"
SCALE = tuple(range(c.RATING_SCALE[0], c.RATING_SCALE[1] + 1))


def condition_of(evaluations: pd.DataFrame) -> pd.Series:
    """The condition column with empty cells (a single-condition study) as "(none)"."""
    if "condition" not in evaluations:
        return pd.Series(NO_CONDITION, index=evaluations.index)
    values = evaluations["condition"].astype("string").str.strip().fillna("")
    return values.replace("", NO_CONDITION).astype(str)


def arm_of(evaluations: pd.DataFrame, factor: str) -> pd.Series:
    values = evaluations[factor].astype("string").str.strip().fillna("")
    return values.replace("", "(empty)").astype(str)


def descriptives(evaluations: pd.DataFrame, factor: str) -> pd.DataFrame:
    """One row per rating, condition and level of `factor`: n, mean, sd (n - 1), median,
    and the count of each scale point (`n_1` .. `n_7`)."""
    frame = pd.DataFrame(
        {"condition": condition_of(evaluations), factor: arm_of(evaluations, factor)}
    )
    out = []
    for rating in c.RATING_COLUMNS:
        values = pd.to_numeric(evaluations[rating])
        grouped = values.groupby([frame["condition"], frame[factor]], sort=True)
        table = pd.DataFrame(
            {
                "n": grouped.size(),
                "mean": grouped.mean(),
                "sd": grouped.std(ddof=1),
                "median": grouped.median(),
            }
        )
        counts = (
            pd.crosstab([frame["condition"], frame[factor]], values)
            .reindex(columns=list(SCALE), fill_value=0)
            .reindex(table.index, fill_value=0)
        )
        for point in SCALE:
            table[f"n_{point}"] = counts[point].astype(int).to_numpy()
        table.insert(0, "rating", rating)
        out.append(table.reset_index())
    return pd.concat(out, ignore_index=True)


def shares(row: pd.Series) -> list[float]:
    """The distribution of one descriptives row as shares of its n (for the bars)."""
    counts = np.array([row[f"n_{p}"] for p in SCALE], dtype=float)
    total = counts.sum()
    return list(counts / total) if total else [0.0] * len(SCALE)
