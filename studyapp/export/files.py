"""The export as a folder (the `export_study` command): all files or none, so an analysis never
reads a half-written export; and the Parquet typing both writers share.

Parquet columns are typed from the codebook, not inferred from the values, so a column that
happens to be empty in one study (or one chunk of the streamed ZIP) keeps its type.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from analysis import contract as c
from analysis.csv_safety import neutralise
from studyapp.export.codebook import codebook_for
from studyapp.export.tables import Tables
from studyapp.export.wide import WIDE, wide_codebook, wide_frame
from studyapp.models import Study
from studyapp.retention.export_files import export_register


def arrow_schema(codebook: pd.DataFrame, file: str) -> Any:
    """Parquet column types of one file's columns, from its codebook rows."""
    import pyarrow as pa

    types = {"integer": pa.int64(), "float": pa.float64()}
    rows = codebook[codebook["file"] == file]
    return pa.schema(
        [(n, types.get(t, pa.string())) for n, t in zip(rows["column"], rows["type"], strict=True)]
    )


def arrow_table(frame: pd.DataFrame, schema: Any) -> Any:
    import pyarrow as pa

    return pa.Table.from_pandas(frame, schema=schema, preserve_index=False)


def schema_json(study: Study) -> str:
    return json.dumps(study.schema, ensure_ascii=False, indent=1)


def export_study(
    *,
    study: Study,
    out: Path,
    parquet: bool = False,
    with_text: bool = False,
    with_panel_ids: bool = False,
    with_test: bool = False,
    with_r: bool = False,
) -> list[Path]:
    """Write the export files into `out` (created if needed); all or nothing. `with_test`:
    test participants (previews, bots) too; `with_r`: the R hand-off beside the tables
    (labelled .rds and .sav, and analysis.R refitting the models with mgcv), when there are
    evaluations."""
    import pyarrow.parquet as pq

    tables = Tables.of(
        study, with_text=with_text, with_panel_ids=with_panel_ids, with_test=with_test
    )
    frames = {
        c.EVALUATIONS: tables.evaluation_frame(list(tables.evaluation_rows())),
        c.PARTICIPANTS: tables.participant_frame(list(tables.participant_rows())),
        c.PAGE_VISITS: tables.page_visit_frame(list(tables.page_visit_rows())),
    }
    codebook = codebook_for(tables)
    frames[WIDE] = wide_frame(frames[c.PARTICIPANTS], frames[c.EVALUATIONS])  # docs/export.md
    codebook = pd.concat([codebook, wide_codebook(codebook, frames[WIDE])], ignore_index=True)
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".export-", dir=out))
    try:
        for name, frame in frames.items():
            neutralise(frame).to_csv(staging / f"{name}.csv", index=False)
        neutralise(codebook).to_csv(staging / c.CODEBOOK, index=False)
        for name, extra in ((n, f) for x in tables.extras for n, f in x.files.items()):
            neutralise(extra).to_csv(staging / name, index=False)  # e.g. the coders' codes
        (staging / c.SCHEMA).write_text(schema_json(study), encoding="utf-8")
        if parquet:
            for name, frame in frames.items():
                table = arrow_table(frame, arrow_schema(codebook, f"{name}.csv"))
                pq.write_table(table, staging / f"{name}.parquet")
        if with_r and len(frames[c.EVALUATIONS]):
            from analysis.r_export import write_r_data

            write_r_data(staging, staging)  # labelled .rds / .sav and analysis.R (mgcv)
        written = []
        for f in sorted(staging.iterdir()):
            target = out / f.name
            f.replace(target)
            written.append(target)
        # registered, so the retention schedule deletes the files when their data is due
        export_register(
            study=study, folder=out, files=written, with_text=with_text,
            with_panel_ids=with_panel_ids, with_test=with_test,
        )  # fmt: skip
        return written
    finally:
        shutil.rmtree(staging, ignore_errors=True)
