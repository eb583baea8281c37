"""What the report reads: the export (folder or ZIP) through `analysis.export.load_export`,
plus the files that reader leaves aside (codebook, page visits, the coders' codings), all
checked before anything is computed, so that bad input stops the report with one line.

Test participants (previews, bots: `is_test` = 1) are left out unless asked for; how many
were left out is kept, since the report says so."""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from analysis import contract as c
from analysis.export import ExportError, StudyExport, load_export

#: the coders' files of an export (studyapp.coding's export tables), read when present
CODINGS = "codings.csv"
CODING_CODEBOOK = "coding_codebook.csv"
#: codebook rows the report words its text from: (file, column)
NEEDED_ENTRIES = tuple((f"{c.EVALUATIONS}.csv", r) for r in c.RATING_COLUMNS) + (
    (f"{c.PARTICIPANTS}.csv", "outcome"),
)
#: participants.csv columns the flow is counted from
FLOW_COLUMNS = ("participant", "state", "outcome")


class ReportError(ValueError):
    """Input the report cannot use; the message is one line naming the problem."""


@dataclass
class ReportInput:
    """The checked export with test participants left out (unless `with_test`)."""

    source: str
    export: StudyExport
    codebook: pd.DataFrame
    page_visits: pd.DataFrame | None
    codings: pd.DataFrame | None
    n_test: int
    with_test: bool
    notes: list[str] = field(default_factory=list)

    @property
    def evaluations(self) -> pd.DataFrame:
        return self.export.evaluations

    @property
    def participants(self) -> pd.DataFrame:
        return self.export.participants


def _members(path: Path) -> dict[str, bytes]:
    """The export's files by name: a folder's, or those of the ZIP's folder that holds
    evaluations.csv (as `load_export` picks it)."""
    if path.is_dir():
        return {p.name: p.read_bytes() for p in path.iterdir() if p.is_file()}
    with zipfile.ZipFile(path) as zf:
        names = [i.filename for i in zf.infolist() if not i.is_dir()]
        tables = [n for n in names if Path(n).stem == c.EVALUATIONS]
        folder = Path(tables[0]).parent if tables else Path(".")
        return {Path(n).name: zf.read(n) for n in names if Path(n).parent == folder}


def _check_files(path: Path, files: dict[str, bytes]) -> None:
    missing = [
        f"{stem}.csv" for stem in (c.EVALUATIONS, c.PARTICIPANTS)
        if f"{stem}.csv" not in files and f"{stem}.parquet" not in files
    ]  # fmt: skip
    if c.CODEBOOK not in files:
        missing.append(c.CODEBOOK)
    if missing:
        raise ReportError(
            f"{path}: the export lacks {', '.join(missing)} (the report needs "
            f"{c.EVALUATIONS}.csv, {c.PARTICIPANTS}.csv and {c.CODEBOOK}; export the study again)"
        )


def _csv(path: Path, name: str, data: bytes) -> pd.DataFrame:
    try:
        return pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ReportError(f"{path}: {name}: cannot read CSV ({str(exc).splitlines()[0]})") from None


def _check_codebook(path: Path, codebook: pd.DataFrame, participants: pd.DataFrame) -> None:
    lacking = [col for col in c.CODEBOOK_COLUMNS if col not in codebook.columns]
    if lacking:
        raise ReportError(
            f"{path}: {c.CODEBOOK} lacks the column(s) {', '.join(lacking)} "
            f"(it needs {', '.join(c.CODEBOOK_COLUMNS)})"
        )
    have = set(zip(codebook["file"], codebook["column"], strict=True))
    absent = [f"{f} {col}" for f, col in NEEDED_ENTRIES if (f, col) not in have]
    if absent:
        raise ReportError(
            f"{path}: {c.CODEBOOK} has no entry for {', '.join(absent)} "
            "(the report words the ratings and the outcomes from it)"
        )
    lacking = [col for col in FLOW_COLUMNS if col not in participants.columns]
    if lacking:
        raise ReportError(
            f"{path}: {c.PARTICIPANTS}.csv lacks the column(s) {', '.join(lacking)} "
            "(the participant flow is counted from them)"
        )


def _is_test(frame: pd.DataFrame) -> pd.Series:
    if "is_test" not in frame:
        return pd.Series(False, index=frame.index)
    return pd.to_numeric(frame["is_test"], errors="coerce").fillna(0).astype(int) == 1


def read_input(path: str | Path, *, with_test: bool = False) -> ReportInput:
    """The export at `path` checked for everything the report uses; a ReportError otherwise."""
    p = Path(path)
    if not p.exists():
        raise ReportError(f"{p}: no such file or folder")
    if not p.is_dir() and not zipfile.is_zipfile(p):
        raise ReportError(f"{p}: neither an export folder nor a ZIP file")
    files = _members(p)
    _check_files(p, files)
    try:
        export = load_export(p)
    except ExportError as exc:
        raise ReportError(str(exc)) from None
    codebook = _csv(p, c.CODEBOOK, files[c.CODEBOOK])
    _check_codebook(p, codebook, export.participants)
    visits = None
    if f"{c.PAGE_VISITS}.csv" in files:
        visits = _csv(p, f"{c.PAGE_VISITS}.csv", files[f"{c.PAGE_VISITS}.csv"])
    codings = _csv(p, CODINGS, files[CODINGS]) if CODINGS in files else None
    test = _is_test(export.participants)
    n_test = int(test.sum())
    if not with_test:
        if n_test == len(test):
            raise ReportError(
                f"{p}: all {n_test} participants are test participants (previews, bots; "
                "is_test = 1); pass --with-test to report on them"
            )
        ids = set(export.participants.loc[test, "participant"].astype(str))
        export = StudyExport(
            directory=export.directory,
            evaluations=export.evaluations.loc[
                ~export.evaluations["participant"].astype(str).isin(ids)
            ].reset_index(drop=True),
            participants=export.participants.loc[~test].reset_index(drop=True),
            items=export.items,
            schema=export.schema,
        )
        if visits is not None and "participant" in visits:
            visits = visits.loc[~visits["participant"].astype(str).isin(ids)]
        if export.evaluations.empty:
            raise ReportError(f"{p}: no evaluations of participants other than test participants")
    return ReportInput(str(p), export, codebook, visits, codings, n_test, with_test)
