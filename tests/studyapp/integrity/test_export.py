"""The integrity files join the export (as CSV, as every added file) with a codebook entry
per column; a study without the signals exports as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from django.test import Client

from studyapp.export.files import export_study
from studyapp.integrity.export import FIELDS, PAGES, SUMMARY
from studyapp.integrity.payload import FIELD
from tests.studyapp.conftest import start
from tests.studyapp.integrity.conftest import integrity_study


def _one_plan(study: Any) -> int:
    w = start(Client(), study)
    w.to_profile()
    w.submit_profile()
    payload = {
        "v": 1,
        "page_ms": 42_000,
        "blurs": 1,
        "hidden": 1,
        "away_ms": 5_000,
        "fields": {
            "acceptance_why": {"pastes": 1, "pasted_chars": 64, "inputs": 1, "first_ms": 7_000}
        },
    }
    assert w.post(w.evaluation_data(**{FIELD: json.dumps(payload)})).status_code == 302
    return w.participant.pk


@pytest.mark.parametrize("on", [True, False])
def test_the_integrity_files_and_their_codebook(
    on: bool, tmp_path: Path, transactional_db: Any, eager: None
):
    study = integrity_study(on=on)
    pid = _one_plan(study)
    written = {p.name for p in export_study(study=study, out=tmp_path, parquet=True)}
    names = {SUMMARY, PAGES, FIELDS}
    if not on:
        assert not names & written
        return
    assert names <= written
    codebook = pd.read_csv(tmp_path / "codebook.csv")
    for name in names:
        frame = pd.read_csv(tmp_path / name)
        documented = codebook.loc[codebook["file"] == name, "column"].tolist()
        assert documented == list(frame.columns), name
    summary = pd.read_csv(tmp_path / SUMMARY).set_index("participant")
    assert summary.loc[pid, "pastes"] == 1 and summary.loc[pid, "tab_hidden"] == 1
    assert summary.loc[pid, "signals"] == "pasted"
    pages = pd.read_csv(tmp_path / PAGES)
    assert pages.to_dict("records")[0] | {"page": "x"} == {
        "participant": pid, "page": "x", "submissions": 1, "page_seconds": 42.0,
        "tab_hidden": 1, "window_blurs": 1, "away_seconds": 5.0, "pastes": 1,
        "pasted_chars": 64, "typing_seconds": 0.0,
    }  # fmt: skip
    fields = pd.read_csv(tmp_path / FIELDS)
    row = fields[fields["field"] == "acceptance_why"].iloc[0]
    assert row["pastes"] == 1 and row["first_seconds"] == 7.0
