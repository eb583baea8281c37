"""participants_wide.csv / .parquet: one row per participant, each plan's ratings at its
position, the per-strategy means, and a codebook row per column — checked cell by cell
against the tidy evaluations.csv the same export wrote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from studyapp.export import export_study
from studyapp.models import Participant
from tests.studyapp.console.factory import populate

pytestmark = pytest.mark.django_db


@pytest.fixture
def written(study: Any, tmp_path: Path) -> Path:
    populate(study, 5, seed=4)
    Participant.objects.create(study=study, state="declined", screening={"gender": "2"})
    export_study(study=study, out=tmp_path, parquet=True)
    return tmp_path


def test_one_row_per_participant_with_each_plans_ratings(written: Path) -> None:
    wide = pd.read_csv(written / "participants_wide.csv", dtype={"participant": str})
    pa_ = pd.read_csv(written / "participants.csv", dtype={"participant": str})
    ev = pd.read_csv(written / "evaluations.csv", dtype={"participant": str})
    assert list(wide["participant"]) == list(pa_["participant"])
    assert list(wide.columns[: len(pa_.columns)]) == list(pa_.columns)
    by_id = wide.set_index("participant")
    for row in ev.itertuples():
        for col in ("acceptance", "action", "strategy", "method", "recourse"):
            assert by_id.loc[row.participant, f"p{row.position}_{col}"] == getattr(row, col)
    for (pid, strategy), value in ev.groupby(["participant", "strategy"])["action"].mean().items():
        slug = "".join(ch if ch.isalnum() else "_" for ch in strategy).strip("_")
        assert by_id.loc[pid, f"action_mean_{slug}"] == pytest.approx(value)
    declined = wide[pa_["state"] == "declined"]
    assert declined.filter(like="p1_").isna().all(axis=None)


def test_every_wide_column_has_a_codebook_row_and_a_parquet_type(written: Path) -> None:
    wide = pd.read_csv(written / "participants_wide.csv", nrows=0)
    cb = pd.read_csv(written / "codebook.csv", keep_default_na=False)
    rows = cb[cb["file"] == "participants_wide.csv"]
    assert list(rows["column"]) == list(wide.columns)
    assert rows["description"].str.len().min() > 0
    accept = rows.set_index("column").loc["p1_acceptance"]
    assert accept["type"] == "integer" and accept["description"].startswith("plan at position 1:")
    schema = pq.read_schema(written / "participants_wide.parquet")
    for r in rows.itertuples():
        want = {"integer": pa.int64(), "float": pa.float64()}.get(r.type, pa.string())
        assert schema.field(r.column).type == want, r.column


def test_the_streamed_zip_carries_the_same_wide_table(written: Path, study: Any) -> None:
    import io
    import zipfile

    from studyapp.export import export_zip_stream

    zf = zipfile.ZipFile(io.BytesIO(b"".join(export_zip_stream(study))))
    names = {Path(n).name: n for n in zf.namelist()}
    assert {"participants_wide.csv", "participants_wide.parquet"} <= set(names)
    zipped = pd.read_csv(io.BytesIO(zf.read(names["participants_wide.csv"])))
    folder = pd.read_csv(written / "participants_wide.csv")
    pd.testing.assert_frame_equal(zipped, folder)
    cb = pd.read_csv(io.BytesIO(zf.read(names["codebook.csv"])), keep_default_na=False)
    assert list(cb.loc[cb["file"] == "participants_wide.csv", "column"]) == list(folder.columns)
