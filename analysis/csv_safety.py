"""Spreadsheet formula injection, neutralised in every CSV the platform writes.

A spreadsheet reads a cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return
as a formula (OWASP, "CSV Injection"): a participant's free-text answer such as
`=HYPERLINK(...)` would run when a researcher opens the export. Text cells that start so are
written with a leading apostrophe, which spreadsheets show as text. Only text columns are
touched — a negative number is data, not a formula — and Parquet keeps the raw text.

The rule is exactly reversible (`restore`, used by `analysis.export.load_export`), so an
analysis reads what the participant typed: a cell is prefixed when, after any apostrophes it
already starts with, it starts with a trigger; `restore` removes one apostrophe from such
cells only. One change is not undone: a lone carriage return (not followed by a line feed)
is written as a line feed, because CSV writers quote a cell for a line feed but not for a
lone carriage return, which readers then take for the end of the row.
"""

from __future__ import annotations

import re

import pandas as pd

from analysis.contract import NOTE

__all__ = ["NOTE", "TRIGGERS", "neutralise", "restore"]

TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def _needs(value: object) -> bool:
    return isinstance(value, str) and value.lstrip("'").startswith(TRIGGERS)


def _text_columns(frame: pd.DataFrame) -> list[str]:
    return [
        c
        for c in frame.columns
        if frame[c].dtype == object or pd.api.types.is_string_dtype(frame[c])
    ]


_LONE_CR = re.compile(r"\r(?!\n)")


def neutralise(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy whose text cells cannot be read as formulas (numbers untouched)."""
    out = frame.copy()
    for col in _text_columns(out):
        lone = out[col].map(lambda v: isinstance(v, str) and bool(_LONE_CR.search(v)))
        if lone.any():
            out[col] = out[col].astype(object)
            out.loc[lone, col] = out.loc[lone, col].map(lambda v: _LONE_CR.sub("\n", v))
        mask = out[col].map(_needs)
        if mask.any():
            out[col] = out[col].astype(object)
            out.loc[mask, col] = "'" + out.loc[mask, col].astype(str)
    return out


def restore(frame: pd.DataFrame) -> pd.DataFrame:
    """The text as it was before `neutralise` (one apostrophe off the prefixed cells)."""
    out = frame.copy()
    for col in _text_columns(out):
        mask = out[col].map(lambda v: _needs(v) and v.startswith("'"))
        if mask.any():
            out[col] = out[col].astype(object)
            out.loc[mask, col] = out.loc[mask, col].str[1:]
    return out
