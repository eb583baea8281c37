"""The tables the analysis reads, each declared once as a pandera schema: an export's
three files, built from the export contract (`analysis.contract`), and the plain CSVs the
commands take (a GAMM's ratings, a population for the segregation indices, coders'
codings).

A fixed column of the contract gets its rules from what the contract states: its type
(`integer`: a whole number, `float`: a finite number, `datetime`: an ISO 8601 time) and its
allowed values, worded for any study (`>=0`, `1..7`, `0; 1`, `pool; generated`). A
distance, in an export or in a plain CSV, gets the engine's one rule
(`recourse_engine.table_rules.distance`). The rules are pandera checks
(`recourse_engine.table_rules`); `check_table` words the first problem as one line for the
reader to raise as its own error.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pandas as pd

from analysis import contract as c
from recourse_engine import FeatureSchema
from recourse_engine import table_rules as rules
from recourse_engine.pool import item_rule

_TYPE_RULES = {
    "integer": lambda: [rules.number(), rules.whole()],
    "float": lambda: [rules.number(), rules.finite()],
    "datetime": lambda: [rules.time()],
    "string": lambda: [],
}
_NUMBER = r"-?\d+(?:\.\d+)?"
_WORD = re.compile(r"[A-Za-z0-9_]+(?:=.*)?")


def allowed_rules(column: c.Column) -> list[Any]:
    """The rules a contract column's allowed values state, as worded for any study:
    `>=N`, `A..B` (`A..k`: from A up), or a closed list (`0; 1`, `0=no; 1=yes`,
    `pool; generated`); nothing for a template a study fills (`{keys}`) or a format."""
    allowed = column.entry().allowed
    if m := re.fullmatch(f">=({_NUMBER})", allowed):
        return [rules.at_least(float(m[1]))]
    if m := re.fullmatch(f"({_NUMBER})\\.\\.(\\S+)", allowed):
        high = re.fullmatch(_NUMBER, m[2])
        low = float(m[1])
        return [rules.between(low, float(m[2]))] if high else [rules.at_least(low)]
    parts = allowed.split("; ")
    if len(parts) > 1 and all(_WORD.fullmatch(p) for p in parts):
        values = [p.split("=")[0] for p in parts]
        return [rules.one_of([int(v) for v in values] if column.type == "integer" else values)]
    return []


def column_rules(file: str, name: str) -> list[Any]:
    """A fixed column's rules from its type and allowed values; a distance's are the
    engine's (`recourse_engine.table_rules.distance`), a whole number for sparsity; an id
    is a label (each participant once in participants.csv)."""
    col = c.column(file, name)
    if name in c.IDENTIFIERS:  # labels, read as text
        return [rules.unique()] if (file, name) == (c.PARTICIPANTS, "participant") else []
    if name in c.DISTANCE_COLUMNS:
        return [*rules.distance(), *([rules.whole()] if col.type == "integer" else [])]
    return [*_TYPE_RULES[col.type](), *allowed_rules(col)]


def export_table(file: str, schema: FeatureSchema | None = None) -> Any:
    """The pandera schema of an export file (`evaluations`, `participants`,
    `page_visits`): every fixed column of the contract as that file has it (a name means
    one thing in every file that has it, unless the contract gives the file its own), the
    columns analyses rely on required (and never empty, but for text: an evaluation may
    lack a strategy), the rest optional; the item columns with the study's schema each
    item's codes as the pool holds them (without it: numbers, whole in evaluations.csv);
    and in evaluations.csv each participant and recourse once."""
    required = c.REQUIRED.get(file, ())
    columns = {
        name: rules.column(column_rules(file, name), required=name in required,
                           empty=name not in required or c.column(file, name).type == "string")
        for name in c.COLUMNS
    }  # fmt: skip
    evaluations = file == c.EVALUATIONS  # a participant without a profile has no codes
    prefixes = {c.EVALUATIONS: c.ITEM_PREFIXES, c.PARTICIPANTS: (c.PROFILE_PREFIX,)}
    for prefix in prefixes.get(file, ()):
        if schema is None:
            codes = [rules.number(), *([rules.whole()] if evaluations else [])]
            columns[f"^{prefix}"] = rules.column(
                codes, required=False, empty=not evaluations, regex=True
            )
            continue
        for it in schema.items:
            columns[prefix + it.key] = rules.column(
                [item_rule(it, empty_fails=evaluations)], required=False
            )
    key = c.EVALUATION_KEY
    once = rules.rule(
        lambda f: ~f.duplicated(list(key)), f"{' and '.join(key)} repeat an earlier row"
    )
    return rules.table(columns, [once] if evaluations else [])


def check_table(frame: pd.DataFrame, schema: Any, source: str) -> str | None:
    """The first problem of `frame` under `schema` as `<source>: row 3, column 'x': ...`,
    or None."""
    problem = rules.first_problem(frame, schema)
    return None if problem is None else f"{source}: {problem}"


# --- the plain CSVs the commands read ------------------------------------------------------


def _plain(columns: dict[str, Any]) -> Any:
    """A plain CSV's schema: its own columns, and a distance wherever a column is named as
    one of the contract's (`sparsity`, `proximity`), as in an export."""
    distances = {
        name: rules.column(rules.distance(), required=False)
        for name in c.DISTANCE_COLUMNS
        if name not in columns
    }
    return rules.table({**columns, **distances})


def gamm_input(distance: str | None, participant: str | None) -> Any:
    """A GAMM's ratings (`recourse-analysis gamm --input`): the covariate it smooths over
    (`--distance`) holds distances, the participant ids are never empty. The rest (the
    outcome's scale, enough rows) the fit checks itself, naming the column."""
    columns = {distance: rules.column(rules.distance(), required=False)} if distance else {}
    if participant:
        columns[participant] = rules.column(required=False, empty=False)
    return _plain(columns)


def population(group: str, features: Sequence[str], units: str | None) -> Any:
    """A population for the segregation indices (`recourse-analysis segregation --input`):
    the features finite numbers (a distance among them a distance), the group and the
    neighbourhood labels never empty."""
    columns = {
        f: rules.column(rules.distance() if f in c.DISTANCE_COLUMNS else
                        [rules.number(), rules.finite()], empty=False)
        for f in features
    }  # fmt: skip
    for name in (group, *([units] if units else [])):
        columns[name] = rules.column(empty=False)
    return _plain(columns)


def codings() -> Any:
    """Coders' codings (`recourse-analysis coding agreement --codings`): one row per unit
    and coder, its codes ';'-joined (empty: coded, no code applies)."""
    return _plain(
        {
            "unit": rules.column(empty=False),
            "coder": rules.column(empty=False),
            "codes": rules.column(),
        }
    )


def coded_units() -> Any:
    """Codes given to answers (`recourse-analysis coding quotes --codings`): unit, code."""
    return _plain({"unit": rules.column(empty=False), "code": rules.column(empty=False)})
