"""Tables checked against a declared pandera schema, and the first problem as one message.

Every table the engine and the analysis read (a pool, an export's files, a plain CSV given
to a command) has its columns declared once as a pandera `DataFrameSchema` built from the
rules here; `first_problem` validates a frame and words what pandera found as
`row 3, column 'proximity': -1.5 is below 0 (4 rows: 3, 5, 8, 9)`, for the reader to
prefix with its file and raise as its own error type; `row_problems` words every bad cell,
row by row, for a preview that shows a researcher all of them at once.

A rule is a pandera `Check` whose `error` is the reason that follows the offending value.
Rules take cells as they are read (a number column may hold text): each converts with
`pd.to_numeric` and leaves a cell that is not a number to the `number` rule, so a bad cell
is named once, with its value as typed. pandera itself is imported on first use, not with
the engine: it takes about a third of a second, which the participant pages need not pay.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.types import is_numeric_dtype

#: how many of a problem's rows a message lists
ROWS_SHOWN = 5
#: the reason a repeated value is given (`unique`, and pandera's own uniqueness check)
DUPLICATE = "repeats an earlier row"
#: pandera's own names for its built-in checks -> the reason a message gives
_BUILT_IN = {"not_nullable": "", "field_uniqueness": DUPLICATE}


def pandera() -> ModuleType:
    """`pandera.pandas`, imported on first use."""
    import pandera.pandas as pa

    return pa


def _numbers(values: pd.Series) -> pd.Series:
    return pd.to_numeric(values, errors="coerce")


def rule(test: Callable[[pd.Series], Any], reason: str, *, empty_fails: bool = False) -> Any:
    """A check that a column's cells pass `test` (a vectorised predicate); a cell that fails
    is reported as `<value> <reason>`. Empty cells (missing, or blank text as Parquet keeps
    an empty time) pass unless `empty_fails`."""

    def check(values: Any) -> pd.Series:
        passed = np.array(test(values), dtype=bool)  # pandera takes an array as one verdict
        if not empty_fails and isinstance(values, pd.Series) and not is_numeric_dtype(values):
            passed |= values.map(lambda v: isinstance(v, str) and not v.strip()).to_numpy(bool)
        return pd.Series(passed, index=values.index)

    return pandera().Check(check, error=reason, ignore_na=not empty_fails)


def number() -> Any:
    return rule(lambda s: _numbers(s).notna(), "is not a number")


def finite() -> Any:
    return rule(lambda s: ~np.isinf(_numbers(s).astype(float)), "is not a finite number")


def whole() -> Any:
    return rule(lambda s: ~(_numbers(s) % 1 > 0), "is not a whole number")


def at_least(low: float) -> Any:
    return rule(lambda s: ~(_numbers(s) < low), f"is below {low:g}")


def between(low: float, high: float) -> Any:
    return rule(
        lambda s: ~((_numbers(s) < low) | (_numbers(s) > high)), f"is not in {low:g}..{high:g}"
    )


def one_of(values: Iterable[Any]) -> Any:
    """A closed set: numbers compared as numbers, anything else as text."""
    allowed = list(values)
    codes = [v for v in allowed if isinstance(v, (int, float))]
    if codes:
        return rule(lambda s: _numbers(s).isin(codes), f"is not one of {_listed(allowed)}")
    return rule(lambda s: s.astype(str).isin(allowed), f"is not one of {_listed(allowed)}")


def time() -> Any:
    """An ISO 8601 date and time (pandas alone would also take `today` or `now`)."""
    return rule(
        lambda s: (
            s.astype(str).str.match(r"\d{4}-\d{2}-\d{2}")
            & pd.to_datetime(s, errors="coerce", utc=True, format="ISO8601").notna()
        ),
        "is not an ISO 8601 time",
    )


def unique() -> Any:
    """Each value once (compared as text, surrounding spaces aside)."""
    return rule(lambda s: ~s.astype(str).str.strip().duplicated(), DUPLICATE)


def distance() -> list[Any]:
    """The one rule for a distance between a profile and a recourse (sparsity, proximity,
    any other the engine computes), wherever a table holds one: a finite number, not
    below 0."""
    return [number(), finite(), at_least(0)]


def column(
    checks: Iterable[Any] = (), *, required: bool = True, empty: bool = True, regex: bool = False
) -> Any:
    """A declared column: its rules, whether the table must have it, whether a cell may be
    empty, whether the name is a pattern (a family such as `x_<item>`)."""
    return pandera().Column(checks=list(checks), required=required, nullable=empty, regex=regex)


def table(columns: dict[str, Any], checks: Iterable[Any] = ()) -> Any:
    """A table's schema: the declared columns (others are let through) and rules on whole
    rows (a check of the frame whose reason is worded without a value)."""
    return pandera().DataFrameSchema(columns, checks=list(checks), strict=False)


def show(value: object) -> str:
    """A cell as a person reads it: text quoted, whole numbers without `.0`, empty named."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or (isinstance(value, float) and np.isnan(value)) or value == "":
        return "empty"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value) if isinstance(value, str) else str(value)


def _listed(values: Iterable[Any]) -> str:
    return ", ".join(str(v) for v in values)


def _worded(where: str, reason: str, rows: list[int]) -> str:
    what = f"{where}{reason}"
    if len(rows) > 1:
        listed = ", ".join(map(str, rows[:ROWS_SHOWN])) + (
            ", ..." if len(rows) > ROWS_SHOWN else ""
        )
        what += f" ({len(rows)} rows: {listed})"
    return f"row {rows[0]}{what}"


def _failure_cases(frame: pd.DataFrame, schema: Any) -> pd.DataFrame | None:
    """pandera's failure cases of `frame` (whose index must be its row positions) with a
    sort key `at_col` (the frame's column order; rules on whole rows last) and `at_row`; None
    when nothing fails."""
    pa = pandera()
    try:
        schema.validate(frame, lazy=True, inplace=True)
    except pa.errors.SchemaErrors as exc:
        cases = exc.failure_cases
    else:
        return None
    order = {name: i for i, name in enumerate(frame.columns)}
    whole_rows = cases["schema_context"] == "DataFrameSchema"
    return cases.assign(
        at_col=cases["column"].map(lambda c: order.get(c, len(order))).where(~whole_rows, len(order)),
        at_row=cases["index"].fillna(-1).astype(int),
    )


def _raise_broken(cases: pd.DataFrame) -> None:
    """A rule that raised (pandera reports it without a row): a bug here, never a pass."""
    present = cases[cases["check"] != "column_in_dataframe"]
    broken = present[present["index"].isna()]
    if len(broken):
        case = broken.iloc[0]
        raise RuntimeError(f"rule {case['check']!r} of column {case['column']!r} failed: "
                           f"{str(case['failure_case']).splitlines()[0]}")  # fmt: skip


def row_problems(
    frame: pd.DataFrame, schema: Any, *, skip: Iterable[str] = ()
) -> list[list[str]]:
    """Per row of `frame`, every bad cell under `schema` as `column 'x': <value> <reason>`
    (in the frame's column order; a rule on whole rows as its reason). Missing columns are
    the caller's to report (a file's problem, not a row's); reasons in `skip` are left out,
    for a caller that words them otherwise."""
    frame = frame.reset_index(drop=True)
    problems: list[list[str]] = [[] for _ in range(len(frame))]
    cases = _failure_cases(frame, schema)
    if cases is None:
        return problems
    _raise_broken(cases)
    cases = cases[cases["check"] != "column_in_dataframe"]
    leave_out = set(skip)
    for case in cases.sort_values(["at_row", "at_col"], kind="stable").itertuples():
        reason = _BUILT_IN.get(str(case.check), str(case.check))
        if reason in leave_out:
            continue
        if case.at_col == len(frame.columns):  # a rule on whole rows
            problems[case.at_row].append(reason)
            continue
        value = show(frame[case.column].iloc[case.at_row])
        problems[case.at_row].append(f"column {case.column!r}: {value} {reason}".strip())
    return problems


def first_problem(frame: pd.DataFrame, schema: Any) -> str | None:
    """What is wrong with `frame` under `schema`, as one line naming the column, the value,
    the reason and the rows (missing columns first, then the first column in the frame's
    order with a bad cell, then rules on whole rows); None when nothing is."""
    if not frame.index.equals(pd.RangeIndex(len(frame))):
        frame = frame.reset_index(drop=True)  # index labels are then row positions
    cases = _failure_cases(frame, schema)
    if cases is None:
        return None
    missing = cases.loc[cases["check"] == "column_in_dataframe", "failure_case"]
    if len(missing):
        return f"missing column(s) {', '.join(map(str, missing))}"
    _raise_broken(cases)
    order = {name: i for i, name in enumerate(frame.columns)}
    cases = cases.sort_values(["at_col", "at_row"], kind="stable")
    first = cases.iloc[0]
    same = cases[(cases["at_col"] == first["at_col"]) & (cases["check"] == first["check"])]
    if first["at_col"] == len(order):
        same = same[same["column"] == first["column"]]
    rows = sorted({int(i) + 1 for i in same["index"]})
    reason = _BUILT_IN.get(str(first["check"]), str(first["check"]))
    if first["at_col"] == len(order):  # a rule on whole rows
        return _worded(": ", reason, rows)
    name = first["column"]
    value = show(frame[name].iloc[rows[0] - 1])
    return _worded(f", column {name!r}: ", f"{value} {reason}".strip(), rows)
