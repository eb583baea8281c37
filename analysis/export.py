"""Reading a study export (docs/export.md) with the checks an analyst would want.

`load_export(path)` reads `evaluations.csv` and `participants.csv` (or their
`.parquet` twins) from an export folder or from the console's export ZIP, checks every
column the analyses rely on, and stops with an `ExportError` naming the export, file, row
and column of the first problem (the export's path once, at the start) — an analysis
never silently runs on a malformed file. A `schema.json` in the folder, when
present, is loaded so that item codes can be put on the schema's normalised scale.

What a well-formed export holds (columns, ids, ratings, item prefixes) is the contract the
platform writes it by (`analysis.contract`), so reader and writer cannot drift apart.
"""

from __future__ import annotations

import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import contract as c
from analysis.csv_safety import restore
from analysis.table_schemas import check_table, export_table
from recourse_engine import FeatureSchema, SchemaError, load_schema
from recourse_engine.csv_table import RaggedCsvError, read_csv_table


class ExportError(ValueError):
    """A malformed export; the message names file, row and column."""


#: the export's files a ZIP may carry; nothing else is extracted from it
ZIP_MEMBERS = (
    f"{c.EVALUATIONS}.csv",
    f"{c.EVALUATIONS}.parquet",
    f"{c.PARTICIPANTS}.csv",
    f"{c.PARTICIPANTS}.parquet",
    c.SCHEMA,
    c.CODEBOOK,
)


@dataclass
class StudyExport:
    directory: Path
    evaluations: pd.DataFrame
    participants: pd.DataFrame
    items: list[str] = field(default_factory=list)
    schema: FeatureSchema | None = None

    def kept_evaluations(self) -> pd.DataFrame:
        """Evaluations without any impossible item — the seed study's analysis set."""
        return self.evaluations.loc[self.evaluations["any_impossible"] == 0].copy()


def _read_table(directory: Path, stem: str) -> tuple[pd.DataFrame, str]:
    csv, parquet = directory / f"{stem}.csv", directory / f"{stem}.parquet"
    if csv.exists():
        try:
            frame = read_csv_table(csv, dtype=dict.fromkeys(c.IDENTIFIERS, str))
            return restore(frame), csv.name  # the text as typed (see analysis.csv_safety)
        except RaggedCsvError as exc:  # named by the file's name: load_export gives the folder
            raise ExportError(str(exc).replace(str(csv), csv.name, 1)) from None
        except (pd.errors.ParserError, UnicodeDecodeError) as exc:
            raise ExportError(f"{csv.name}: cannot parse CSV ({exc})") from exc
        except pd.errors.EmptyDataError:
            raise ExportError(f"{csv.name}: file is empty") from None
    if parquet.exists():
        try:
            frame = pd.read_parquet(parquet)
        except Exception as exc:  # pyarrow raises several unrelated types for bad files
            raise ExportError(f"{parquet.name}: cannot read Parquet ({exc})") from exc
        for col in c.IDENTIFIERS:
            if col in frame:
                frame[col] = frame[col].astype(str)
        return frame, parquet.name
    raise ExportError(f"neither {stem}.csv nor {stem}.parquet found")


def _first_bad(mask: np.ndarray) -> int:
    """1-based data row number (header excluded) of the first True in mask."""
    return int(np.flatnonzero(mask)[0]) + 1


def _check(frame: pd.DataFrame, name: str, file: str, schema: FeatureSchema | None) -> None:
    """`frame` against the file's declared schema (`analysis.table_schemas`)."""
    problem = check_table(frame, export_table(file, schema), name)
    if problem is not None:
        raise ExportError(problem)


def _typed_evaluations(ev: pd.DataFrame, name: str, schema: FeatureSchema | None) -> pd.DataFrame:
    """Checked evaluations with numbers as numbers: ratings, flags and codes as integers
    (a numeric item's values as floats), distances as floats."""
    _check(ev, name, c.EVALUATIONS, schema)
    if ev.empty:
        raise ExportError(f"{name}: no evaluations")
    ev = ev.copy()
    for col in (*c.RATING_COLUMNS, "any_impossible"):
        ev[col] = pd.to_numeric(ev[col]).astype(int)
    for col in c.DISTANCE_COLUMNS:
        ev[col] = pd.to_numeric(ev[col]).astype(float)
    numeric = {it.key for it in schema.items if it.is_numeric} if schema else set()
    for key in _item_columns(ev, c.PROFILE_PREFIX):
        for col in (c.PROFILE_PREFIX + key, c.COUNTERFACTUAL_PREFIX + key):
            ev[col] = pd.to_numeric(ev[col]).astype(float if key in numeric else int)
    return ev


def _item_columns(frame: pd.DataFrame, prefix: str) -> list[str]:
    return [c[len(prefix) :] for c in frame.columns if c.startswith(prefix)]


def load_export(path: str | Path) -> StudyExport:
    """Read and check a study export, a folder or the console's ZIP; raises ExportError on
    the first problem, its message starting with `path` (once).

    A ZIP's tables are extracted to a temporary folder first (only the export's own file
    names, wherever they sit in the archive), so both forms are checked by the one reader;
    the returned export's `directory` is then the ZIP's path."""
    p = Path(path)
    if p.is_dir():
        try:
            return _load_folder(p)
        except ExportError as exc:
            raise ExportError(f"{p}: {exc}") from None
    if not p.exists():
        raise ExportError(f"{p}: no such file or folder")
    if not zipfile.is_zipfile(p):
        raise ExportError(f"{p}: neither an export folder nor a ZIP file")
    with zipfile.ZipFile(p) as zf, tempfile.TemporaryDirectory(prefix="export-") as tmp:
        members = [i for i in zf.infolist() if Path(i.filename).name in ZIP_MEMBERS]
        tables = [i for i in members if Path(i.filename).stem == c.EVALUATIONS]
        if not tables:
            raise ExportError(f"{p}: the ZIP holds no {c.EVALUATIONS}.csv")
        folder = Path(tables[0].filename).parent
        for info in members:
            if Path(info.filename).parent == folder:
                (Path(tmp) / Path(info.filename).name).write_bytes(zf.read(info))
        try:
            export = _load_folder(Path(tmp))
        except ExportError as exc:  # name the ZIP, not the temporary folder
            raise ExportError(f"{p}: {str(exc).replace(f'{tmp}: ', '')}") from None
    export.directory = p
    return export


def _load_folder(d: Path) -> StudyExport:
    schema = None
    if (d / c.SCHEMA).exists():
        try:
            schema = load_schema(d / c.SCHEMA)
        except SchemaError as exc:
            raise ExportError(str(exc)) from None
    ev, ev_name = _read_table(d, c.EVALUATIONS)
    x_, cf_ = c.PROFILE_PREFIX, c.COUNTERFACTUAL_PREFIX
    items = _item_columns(ev, x_)
    missing_cf = [k for k in items if f"{cf_}{k}" not in ev.columns]
    if missing_cf:
        raise ExportError(f"{ev_name}: x_ columns without cf_ twin: {', '.join(missing_cf)}")
    unknown_items = [k for k in items if schema is not None and k not in schema.keys]
    if unknown_items:
        raise ExportError(f"{ev_name}: item columns not in schema.json: {', '.join(unknown_items)}")
    ev = _typed_evaluations(ev, ev_name, schema)
    pa, pa_name = _read_table(d, c.PARTICIPANTS)
    _check(pa, pa_name, c.PARTICIPANTS, schema)
    unknown = ~ev["participant"].isin(pa["participant"]).to_numpy()
    if unknown.any():
        row = _first_bad(unknown)
        raise ExportError(
            f"{ev_name}: row {row}, column 'participant': "
            f"{ev['participant'].iloc[row - 1]!r} is not in {pa_name}"
        )
    return StudyExport(directory=d, evaluations=ev, participants=pa, items=items, schema=schema)
