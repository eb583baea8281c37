"""Spreadsheet formula injection: every text cell that a spreadsheet would run as a formula
is written with a leading apostrophe in the export's CSV files (folder and ZIP), Parquet
keeps the raw text, numbers are untouched, and the analysis reads back what was typed."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from analysis import contract
from analysis.csv_safety import TRIGGERS, neutralise, restore
from analysis.export import load_export
from studyapp.export import export_study, export_zip_stream
from studyapp.models import Evaluation
from tests.studyapp.console.factory import populate

TYPED = [
    '=HYPERLINK("http://evil.example","click")',
    "+1 more year",
    "-3 weeks of work",
    "@SUM(A1:A9)",
    "\tindented",
    "\rreturn",
    "'=already quoted",
    "fine as it is",
    "it costs -100",
]


@pytest.fixture
def answered(study: Any) -> Any:
    populate(study, 2, seed=4)
    for ev, text in zip(
        Evaluation.objects.filter(participant__study=study).order_by("pk"), TYPED * 2, strict=False
    ):
        Evaluation.objects.filter(pk=ev.pk).update(acceptance_why=text, action_why=text)
    return study


def _raw_cells(csv_text: str, column: str) -> list[str]:
    frame = pd.read_csv(io.StringIO(csv_text), dtype=str, keep_default_na=False)
    return frame[column].tolist()


def test_the_folder_export_neutralises_and_the_analysis_restores(
    answered: Any, tmp_path: Path
) -> None:
    export_study(study=answered, out=tmp_path, parquet=True, with_text=True)
    cells = _raw_cells((tmp_path / "evaluations.csv").read_text(), "acceptance_why")
    typed = Evaluation.objects.filter(participant__study=answered).order_by(
        "participant_id", "recourse__position"
    )
    for cell, ev in zip(cells, typed, strict=True):
        text = ev.acceptance_why.replace("\r", "\n")  # a lone CR is written as LF
        if text.lstrip("'").startswith(TRIGGERS):
            assert cell == "'" + text  # never a formula in a spreadsheet
        else:
            assert cell == text
        assert not cell.startswith(TRIGGERS)
    raw = pd.read_parquet(tmp_path / "evaluations.parquet")["acceptance_why"].tolist()
    assert sorted(raw) == sorted(ev.acceptance_why for ev in typed)  # Parquet keeps the text
    back = load_export(tmp_path).evaluations
    as_typed = [ev.acceptance_why.replace("\r", "\n") for ev in typed]
    assert sorted(back["acceptance_why"]) == sorted(as_typed)
    assert pd.api.types.is_numeric_dtype(back["proximity"])  # numbers stay numbers
    cb = pd.read_csv(tmp_path / contract.CODEBOOK, keep_default_na=False)
    described = cb[cb["column"] == "acceptance_why"]["description"].iloc[0]
    assert "formula injection" in described


def test_the_zip_export_neutralises_too(answered: Any) -> None:
    data = b"".join(export_zip_stream(answered, with_text=True))
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        name = next(n for n in zf.namelist() if n.endswith("evaluations.csv"))
        cells = _raw_cells(zf.read(name).decode(), "action_why")
    assert cells and not any(c.startswith(TRIGGERS) for c in cells)
    assert '\'=HYPERLINK("http://evil.example","click")' in cells


def test_neutralise_and_restore_are_exact_inverses() -> None:
    texts = [t for t in TYPED if "\r" not in t]
    frame = pd.DataFrame({"t": [*texts, "''-x", "a\r\nb", None], "n": [-1.5] * (len(texts) + 3)})
    out = neutralise(frame)
    assert out["n"].tolist() == frame["n"].tolist()
    assert restore(out)["t"].tolist()[:-1] == frame["t"].tolist()[:-1]
    assert pd.isna(restore(out)["t"].iloc[-1])
