"""Pools (and batches of factual profiles): validated tables of item codes with income.

CSV form: an `id` column, an `income` column (JPY, the same unit for pool and
profiles), one column per schema item holding option codes; any other column
(e.g. `gender`, a label) is kept in `extra`. Validation names file, row and
column of the first problem and never returns a partially-checked table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import table_rules as rules
from .csv_table import RaggedCsvError, read_csv_table
from .schema import FeatureSchema, Item


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


def item_allowed(item: Item) -> str:
    """What a pool cell of `item` may hold, as its error message words it."""
    if item.is_numeric:
        return f"a number in [{item.min_value:g}, {item.max_value:g}]"
    return f"an option code 1..{item.n_options}"


def pool_table(schema: FeatureSchema, *, require_income: bool = True) -> Any:
    """The pool's columns as a pandera schema (`recourse_engine.table_rules`): a unique
    non-empty `id`, `income` (JPY) a finite number not below 0, and each schema item's
    codes (or values, for a numeric item); any other column is kept as it is."""
    columns = {
        "id": rules.column(
            [rules.rule(lambda s: s.astype(str).str.strip() != "", "is not an id",
                        empty_fails=True),
             rules.unique()],
            empty=False,
        ),  # fmt: skip
        "income": rules.column(
            [rules.number(), rules.finite(), rules.at_least(0)], required=require_income
        ),
    }
    for it in schema.items:
        columns[it.key] = rules.column([item_rule(it)])
    return rules.table(columns)


def item_rule(item: Item, *, empty_fails: bool = True) -> Any:
    """An item's cells hold its codes (or values, for a numeric item): the rule wherever a
    table holds them (a pool, an export's profiles and counterfactuals)."""
    return rules.rule(
        lambda s: item.valid(pd.to_numeric(s, errors="coerce")),
        f"is not {item_allowed(item)}",
        empty_fails=empty_fails,
    )


def pool_from_frame(
    frame: pd.DataFrame,
    schema: FeatureSchema,
    *,
    source: str = "pool",
    require_income: bool = True,
) -> Pool:
    """Validate a table against `pool_table` and build a Pool; raises PoolError naming
    source, row and column."""
    if not isinstance(frame, pd.DataFrame):
        raise PoolError(f"{source}: expected a table")
    cols = [str(c) for c in frame.columns]
    dup_cols = sorted({c for c in cols if cols.count(c) > 1})
    if dup_cols:
        raise PoolError(f"{source}: duplicate column(s) {', '.join(dup_cols)}")
    problem = rules.first_problem(frame, pool_table(schema, require_income=require_income))
    if problem is not None:
        raise PoolError(f"{source}: {problem}")
    if len(frame) == 0:
        raise PoolError(f"{source}: no rows")
    ids = frame["id"].astype(str).str.strip().to_numpy(dtype=object)
    income = None
    if "income" in frame.columns:
        income = pd.to_numeric(frame["income"], errors="coerce").to_numpy(dtype=float)
    codes = np.empty((len(frame), schema.d), dtype=float, order="F")
    for j, it in enumerate(schema.items):
        codes[:, j] = pd.to_numeric(frame[it.key], errors="coerce").to_numpy(dtype=float)
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
