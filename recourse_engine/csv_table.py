"""Reading a CSV table as written: the header names every column, and a row with more fields
than the header is refused with its line number.

pandas, left to itself, takes a row with one extra field (or a trailing comma) as a row
label and shifts every column one place; with `index_col=False` it drops the extra field
and warns. Either way a model could run on the wrong columns, or an error blame the wrong
one. Every CSV reader of the engine and the analysis goes through `read_csv_table`.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import lzma
import warnings
from pathlib import Path
from typing import Any

import pandas as pd


class RaggedCsvError(ValueError):
    """A row with more fields than the header; the message names the file and line."""


_OPENERS: dict[str, Any] = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


def _open_text(path: Path | str) -> Any:
    """The file as text, decompressed where its suffix says so (as pandas infers it)."""
    opener = _OPENERS.get(Path(path).suffix, open)
    return opener(path, "rt", newline="", encoding="utf-8-sig", errors="replace")


def first_ragged_line(
    path: Path | str, sep: str = ",", names: list[str] | None = None
) -> str | None:
    """Where `path` first has a row longer than its header (or than `names`, for a file
    without a header row), as a message; None if nowhere."""
    with _open_text(path) as fh:
        reader = csv.reader(fh, delimiter=sep)
        header = list(names) if names is not None else next(reader, None)
        if header is None:
            return None
        for row in reader:
            if len(row) > len(header):
                extra = (
                    "a trailing comma"
                    if len(row) == len(header) + 1 and row[-1] == ""
                    else (f"{len(row) - len(header)} extra field(s)")
                )
                return (
                    f"{path}: line {reader.line_num} has {len(row)} fields, the header "
                    f"{len(header)} ({extra}); every row needs exactly the header's columns"
                )
    return None


def read_csv_table(path: Path | str, **kwargs: Any) -> pd.DataFrame:
    """`pd.read_csv(path, index_col=False, **kwargs)`, refusing a ragged row
    (RaggedCsvError) instead of shifting or dropping its fields. The rows are counted first
    with the csv module: pandas drops a trailing comma on every row without a word."""
    sep, names = kwargs.get("sep", ","), kwargs.get("names")
    if kwargs.get("header", "infer") is None and names is None:
        return pd.read_csv(path, index_col=False, **kwargs)  # no width to hold rows to
    if Path(path).is_file():
        where = first_ragged_line(path, sep, names)
        if where is not None:
            raise RaggedCsvError(where)
    with warnings.catch_warnings():
        warnings.simplefilter("error", pd.errors.ParserWarning)
        try:
            return pd.read_csv(path, index_col=False, **kwargs)
        except (pd.errors.ParserWarning, pd.errors.ParserError) as exc:
            where = first_ragged_line(path, sep, names) if Path(path).is_file() else None
            if where is None:
                raise pd.errors.ParserError(str(exc)) from None
            raise RaggedCsvError(where) from None
