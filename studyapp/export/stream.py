"""The export as a ZIP streamed while it is written (console and API downloads): a study of
10,000 participants would time out, or fill the memory, if the ZIP were built first.

Participants and evaluations are read with `.iterator(chunk_size)` and written to the ZIP a
chunk at a time; Parquet files are written alongside into temporary files (typed from the
codebook) and copied into the ZIP at the end, so memory stays bounded by one chunk whatever
the study's size. With `with_r` the CSVs are also kept in a temporary folder and, once written,
turned into the R hand-off (labelled .rds / .sav and analysis.R, as `export_study --with-r`
writes beside the tables); that step reads the evaluations and participants whole.
"""

from __future__ import annotations

import datetime as dt
import io
import logging
import os
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from analysis import contract as c
from analysis.csv_safety import neutralise
from studyapp.export.codebook import codebook_for
from studyapp.export.files import arrow_schema, arrow_table, schema_json
from studyapp.export.tables import Tables
from studyapp.export.wide import WIDE, wide_from_copies
from studyapp.models import Study

logger = logging.getLogger(__name__)
#: written into the ZIP instead of the R data when they cannot be made
R_ERROR = "r_data_error.txt"


class _Sink(io.RawIOBase):
    """A write-only stream that hands out what was written since the last `drain`."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self._parts.append(bytes(data))
        return len(data)

    def drain(self) -> bytes:
        out = b"".join(self._parts)
        self._parts.clear()
        return out


def _chunks(rows: Iterable[Any], size: int) -> Iterator[list[Any]]:
    chunk: list[Any] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _member(name: str, *, stored: bool = False) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=dt.datetime.now().timetuple()[:6])
    info.compress_type = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    return info


def export_zip_stream(
    study: Study,
    *,
    with_panel_ids: bool = False,
    with_text: bool = False,
    with_test: bool = False,
    parquet: bool = True,
    with_r: bool = False,
    chunk_size: int = 2000,
) -> Iterator[bytes]:
    """The export as a ZIP, produced piece by piece (none empty) for a streaming response.
    `with_r`: the R hand-off at the ZIP's root beside the tables, when there are evaluations
    (unzipped, the folder is what `export_study --with-r` writes)."""
    tables = Tables.of(
        study, with_text=with_text, with_panel_ids=with_panel_ids, with_test=with_test
    )
    pieces = _zip_pieces(tables, parquet=parquet, with_r=with_r, chunk_size=chunk_size)
    for piece in pieces:
        if piece:
            yield piece


def _table_member(
    zf: zipfile.ZipFile,
    sink: _Sink,
    name: str,
    columns: list[str],
    rows: Iterable[dict[str, Any]],
    to_frame: Callable[[list[dict[str, Any]]], pd.DataFrame],
    parquet: tuple[Path, Any] | None,
    chunk_size: int,
    copy: Path | None = None,
) -> Iterator[bytes]:
    """`<name>.csv` into the ZIP chunk by chunk, into `parquet` (path, Arrow schema) and, for
    the R hand-off, into `copy` (the same bytes)."""
    import pyarrow.parquet as pq

    writer, arrow = (pq.ParquetWriter(*parquet), parquet[1]) if parquet else (None, None)
    with (
        zf.open(_member(f"{name}.csv"), mode="w") as member,
        open(copy if copy is not None else os.devnull, "wb") as tee,
    ):
        header = ",".join(columns).encode() + b"\n"
        member.write(header)
        tee.write(header)
        for chunk in _chunks(rows, chunk_size):
            frame = to_frame(chunk)
            data = neutralise(frame).to_csv(index=False, header=False).encode()
            member.write(data)
            tee.write(data)
            if writer is not None:
                writer.write_table(arrow_table(frame, arrow))
            yield sink.drain()
    if writer is not None:
        writer.close()


def _copy_member(zf: zipfile.ZipFile, sink: _Sink, path: Path, *, stored: bool) -> Iterator[bytes]:
    """A file into the ZIP a megabyte at a time."""
    with open(path, "rb") as fh, zf.open(_member(path.name, stored=stored), mode="w") as member:
        while piece := fh.read(1 << 20):
            member.write(piece)
            yield sink.drain()


def _r_members(zf: zipfile.ZipFile, sink: _Sink, folder: Path) -> Iterator[bytes]:
    """The R hand-off of the CSV copies in `folder` (left out when nothing was evaluated)."""
    evaluations = folder / f"{c.EVALUATIONS}.csv"
    with open(evaluations, "rb") as fh:
        if sum(1 for _ in fh) < 2:
            return
    from analysis.r_export import write_r_data

    try:
        written = write_r_data(folder, folder / "r")
    except Exception as exc:  # the tables are already sent: say so in the ZIP, do not cut it
        logger.exception("R hand-off of the streamed export failed")
        note = f"The R data could not be written ({type(exc).__name__}: {exc}).\n"
        zf.writestr(_member(R_ERROR), note + "The CSV and Parquet tables are complete.\n")
        yield sink.drain()
        return
    for path in written:
        # .rds is gzip inside and .sav compressed; deflating them again gains nothing
        yield from _copy_member(zf, sink, path, stored=path.suffix in (".rds", ".sav"))


def _zip_pieces(tables: Tables, *, parquet: bool, with_r: bool, chunk_size: int) -> Iterator[bytes]:
    codebook = codebook_for(tables)
    sink = _Sink()
    tmp = tempfile.TemporaryDirectory(prefix="export-")
    names = (c.EVALUATIONS, c.PARTICIPANTS, c.PAGE_VISITS)
    sources = {
        c.EVALUATIONS: (
            tables.evaluation_columns,
            tables.evaluation_rows(chunk_size),
            tables.evaluation_frame,
        ),
        c.PARTICIPANTS: (
            tables.participant_columns,
            tables.participant_rows(chunk_size),
            tables.participant_frame,
        ),
        c.PAGE_VISITS: (
            tables.page_visit_columns,
            tables.page_visit_rows(chunk_size),
            tables.page_visit_frame,
        ),
    }
    try:
        with zipfile.ZipFile(sink, mode="w", compression=zipfile.ZIP_DEFLATED) as zf:
            for name in names:
                target = (
                    (Path(tmp.name) / f"{name}.parquet", arrow_schema(codebook, f"{name}.csv"))
                    if parquet
                    else None
                )
                copy = Path(tmp.name) / f"{name}.csv"  # for the wide table and the R hand-off
                yield from _table_member(zf, sink, name, *sources[name], target, chunk_size, copy)
            wide, wide_rows = wide_from_copies(Path(tmp.name), codebook)  # docs/export.md
            codebook = pd.concat([codebook, wide_rows], ignore_index=True)
            zf.writestr(_member(f"{WIDE}.csv"), neutralise(wide).to_csv(index=False))
            if parquet:
                import pyarrow.parquet as pq

                schema = arrow_schema(codebook, f"{WIDE}.csv")
                pq.write_table(arrow_table(wide, schema), Path(tmp.name) / f"{WIDE}.parquet")
            zf.writestr(_member(c.CODEBOOK), neutralise(codebook).to_csv(index=False))
            if with_r:
                neutralise(codebook).to_csv(Path(tmp.name) / c.CODEBOOK, index=False)
            for name, extra in ((n, f) for x in tables.extras for n, f in x.files.items()):
                zf.writestr(_member(name), neutralise(extra).to_csv(index=False))
            zf.writestr(_member(c.SCHEMA), schema_json(tables.study))
            yield sink.drain()
            if parquet:
                for name in (*names, WIDE):
                    path = Path(tmp.name) / f"{name}.parquet"
                    yield from _copy_member(zf, sink, path, stored=True)
            if with_r:
                yield from _r_members(zf, sink, Path(tmp.name))
        yield sink.drain()
    finally:
        tmp.cleanup()
