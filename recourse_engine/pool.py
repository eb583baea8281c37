"""Pools (and batches of factual profiles): validated tables of item codes with income.

CSV form: an `id` column, an `income` column (JPY, the same unit for pool and
profiles), one column per schema item holding option codes; any other column
(e.g. `gender`, a label) is kept in `extra`. Validation names file, row and
column of the first problem and never returns a partially-checked table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .csv_table import RaggedCsvError, read_csv_table
from .schema import FeatureSchema


class PoolError(ValueError):
    """A malformed pool or profile table; the message names file, row and column."""


@dataclass
class Pool:
    """Item codes in column-major order, so per-item scans over a large pool are contiguous."""

    schema_hash: str
    ids: np.ndarray
    codes: np.ndarray
    income: np.ndarray | None
    extra: pd.DataFrame = field(default_factory=pd.DataFrame)
    _mad: np.ndarray | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.ids)

    def mad(self) -> np.ndarray:
        """Median absolute deviation per item (Wachter et al.'s weights), computed once."""
        if self._mad is None:
            med = np.median(self.codes, axis=0)
            self._mad = np.median(np.abs(self.codes - med), axis=0)
        return self._mad

    def to_frame(self, schema: FeatureSchema) -> pd.DataFrame:
        out = pd.DataFrame({"id": self.ids})
        if self.income is not None:
            out["income"] = self.income
        for j, key in enumerate(schema.keys):
            col = self.codes[:, j]
            out[key] = col if schema.items[j].is_numeric else col.astype(int)
        for c in self.extra.columns:
            out[c] = self.extra[c].to_numpy()
        return out


def _show(value: object) -> str:
    """A cell as a person reads it: strings quoted, numbers plain (no numpy repr)."""
    if isinstance(value, np.generic):
        value = value.item()
    return repr(value) if isinstance(value, str) else str(value)


def _row_of(mask: np.ndarray) -> int:
    """1-based data row (header excluded) of the first True."""
    return int(np.flatnonzero(mask)[0]) + 1


def pool_from_frame(
    frame: pd.DataFrame,
    schema: FeatureSchema,
    *,
    source: str = "pool",
    require_income: bool = True,
) -> Pool:
    """Validate a table and build a Pool; raises PoolError naming source, row and column."""
    if not isinstance(frame, pd.DataFrame):
        raise PoolError(f"{source}: expected a table")
    cols = [str(c) for c in frame.columns]
    dup_cols = sorted({c for c in cols if cols.count(c) > 1})
    if dup_cols:
        raise PoolError(f"{source}: duplicate column(s) {', '.join(dup_cols)}")
    required = ["id", *(["income"] if require_income else []), *schema.keys]
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise PoolError(f"{source}: missing column(s) {', '.join(missing)}")
    if len(frame) == 0:
        raise PoolError(f"{source}: no rows")
    ids = frame["id"]
    if ids.isna().any():
        raise PoolError(f"{source}: row {_row_of(ids.isna().to_numpy())}, column 'id': empty id")
    ids = ids.astype(str).str.strip().to_numpy(dtype=object)
    empty = ids == ""
    if empty.any():
        raise PoolError(f"{source}: row {_row_of(empty)}, column 'id': empty id")
    dup = pd.Series(ids).duplicated().to_numpy()
    if dup.any():
        row = _row_of(dup)
        raise PoolError(f"{source}: row {row}, column 'id': duplicate id {ids[row - 1]!r}")

    income = None
    if "income" in frame.columns:
        inc = pd.to_numeric(frame["income"], errors="coerce").to_numpy(dtype=float)
        bad = ~np.isfinite(inc)
        if bad.any():
            row = _row_of(bad)
            raise PoolError(
                f"{source}: row {row}, column 'income': not a number "
                f"({_show(frame['income'].iloc[row - 1])})"
            )
        if (inc < 0).any():
            raise PoolError(f"{source}: row {_row_of(inc < 0)}, column 'income': negative income")
        income = inc

    codes = np.empty((len(frame), schema.d), dtype=float, order="F")
    for j, it in enumerate(schema.items):
        raw = frame[it.key]
        values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
        bad = ~it.valid(values)
        if bad.any():
            row = _row_of(bad)
            allowed = (
                f"a number in [{it.min_value:g}, {it.max_value:g}]"
                if it.is_numeric
                else f"an option code 1..{it.n_options}"
            )
            raise PoolError(
                f"{source}: row {row}, column {it.key!r}: {_show(raw.iloc[row - 1])} is not {allowed}"
            )
        codes[:, j] = values
    known = {"id", "income", *schema.keys}
    extra = frame[[c for c in frame.columns if c not in known]].reset_index(drop=True)
    return Pool(schema_hash=schema.hash(), ids=ids, codes=codes, income=income, extra=extra)


def read_pool_csv(path: str | Path, schema: FeatureSchema, *, require_income: bool = True) -> Pool:
    """Read and validate a pool (or profiles) CSV; errors name the file, row and column."""
    path = Path(path)
    try:
        frame = read_csv_table(path, dtype={"id": str}, skipinitialspace=True)
    except FileNotFoundError:
        raise PoolError(f"{path}: file not found") from None
    except pd.errors.EmptyDataError:
        raise PoolError(f"{path}: file is empty") from None
    except RaggedCsvError as exc:
        raise PoolError(str(exc)) from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise PoolError(f"{path}: cannot parse CSV ({exc})") from None
    frame.columns = [str(c).strip() for c in frame.columns]
    return pool_from_frame(frame, schema, source=str(path), require_income=require_income)


def profile_codes(schema: FeatureSchema, profile: object) -> np.ndarray:
    """One factual profile as a (d,) float array, from a mapping key->code or a sequence."""
    if isinstance(profile, dict):
        missing = [k for k in schema.keys if k not in profile]
        if missing:
            raise PoolError(f"profile: missing item(s) {', '.join(missing)}")
        values = np.array([profile[k] for k in schema.keys], dtype=float)
    else:
        values = np.asarray(profile, dtype=float).ravel()
        if values.shape != (schema.d,):
            raise PoolError(f"profile: expected {schema.d} item codes, got {values.size}")
    for j, it in enumerate(schema.items):
        if not it.valid(values[j : j + 1])[0]:
            raise PoolError(f"profile: item {it.key!r}: {values[j]!r} is not a valid code")
    return values
