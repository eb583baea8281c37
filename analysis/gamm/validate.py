"""Checks on the data handed to a GAMM fit; every failure names the column and, where it helps,
the offending row, so a bad export is caught before any fitting or writing happens."""

from __future__ import annotations

import numpy as np
import pandas as pd

RATING_MIN, RATING_MAX = 1, 7


class GammInputError(ValueError):
    """The data cannot be fitted as asked; the message says why."""


def require_columns(data: pd.DataFrame, columns: list[str], source: str = "data") -> None:
    if not isinstance(data, pd.DataFrame):
        raise GammInputError(f"{source} must be a pandas DataFrame, got {type(data).__name__}")
    missing = [c for c in columns if c not in data.columns]
    if missing:
        have = ", ".join(map(str, data.columns)) or "none"
        raise GammInputError(
            f"{source} is missing column(s) {', '.join(missing)} (columns present: {have})"
        )
    if len(data) == 0:
        raise GammInputError(f"{source} has no rows")


def _first_bad(mask: np.ndarray, data: pd.DataFrame) -> str:
    pos = int(np.flatnonzero(mask)[0])
    return f"row {pos + 1} (index {data.index[pos]!r})"


def numeric_column(data: pd.DataFrame, column: str, source: str = "data") -> np.ndarray:
    """The column as finite floats, or a GammInputError naming the first bad row."""
    raw = data[column]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(values)
    if bad.any():
        where = _first_bad(bad, data)
        shown = raw.iloc[int(np.flatnonzero(bad)[0])]
        raise GammInputError(
            f"{source}: column {column!r} must be numeric and finite; {where} has {shown!r}"
        )
    return values


def rating_column(data: pd.DataFrame, column: str, source: str = "data") -> np.ndarray:
    """Integer ratings on the 1..7 scale."""
    values = numeric_column(data, column, source)
    non_int = values != np.round(values)
    if non_int.any():
        raise GammInputError(
            f"{source}: column {column!r} holds ratings, which must be whole numbers; "
            f"{_first_bad(non_int, data)} has {values[non_int][0]!r}"
        )
    out = (values < RATING_MIN) | (values > RATING_MAX)
    if out.any():
        raise GammInputError(
            f"{source}: column {column!r} holds ratings on the {RATING_MIN}..{RATING_MAX} scale; "
            f"{_first_bad(out, data)} has {values[out][0]:g}"
        )
    return values


def group_column(data: pd.DataFrame, column: str, source: str = "data") -> pd.Series:
    raw = data[column]
    missing = raw.isna().to_numpy()
    if missing.any():
        raise GammInputError(
            f"{source}: column {column!r} (participant ids) is empty in {_first_bad(missing, data)}"
        )
    groups = raw.astype(str)
    if groups.nunique() < 2:
        raise GammInputError(
            f"{source}: column {column!r} has a single participant ({groups.iloc[0]!r}); "
            "random effects per participant need at least two"
        )
    return groups


def check_replicated(data: pd.DataFrame, column: str, term: str, source: str = "data") -> None:
    """A random effect whose grouping column has a different value in every row cannot be told
    apart from the residual error (and would make a model as large as the data)."""
    levels = int(data[column].nunique())
    if levels == len(data):
        raise GammInputError(
            f"{source}: random effect {term}: column {column!r} has a different value in every "
            f"row ({levels} levels for {len(data)} rows); a random effect needs several rows per "
            "level"
        )


def smooth_covariate(data: pd.DataFrame, column: str, k: int, source: str = "data") -> np.ndarray:
    values = numeric_column(data, column, source)
    distinct = np.unique(values)
    if distinct.size < 2:
        raise GammInputError(
            f"{source}: column {column!r} is constant ({distinct[0]:g}); "
            "a smooth of it cannot be estimated"
        )
    if distinct.size < k:
        raise GammInputError(
            f"{source}: column {column!r} has {distinct.size} distinct values, fewer than the "
            f"basis dimension k = {k}; use a smaller k"
        )
    return values


def check_basis(basis: str, k: int) -> None:
    if basis not in ("tp", "cr"):
        raise GammInputError(f"basis must be 'tp' or 'cr', got {basis!r}")
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 3:
        raise GammInputError(f"k must be an integer >= 3, got {k!r}")
