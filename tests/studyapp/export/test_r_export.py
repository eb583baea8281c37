"""`export_study --with-r` and the console's streamed ZIP with `r=1`: the study's export carries
the R hand-off — labelled R data whose coded columns are factors with the codebook's labels, and
analysis.R, which refits the models with mgcv where R is installed."""

from __future__ import annotations

import io
import shutil
import subprocess
import zipfile
from io import StringIO
from pathlib import Path
from typing import Any

import pandas as pd
import pyreadr
import pyreadstat
import pytest
from django.core.management import call_command

from analysis.export import load_export
from analysis.r_export import R_FILES
from tests.run_cli import run_analysis
from tests.services import services_required
from tests.studyapp.console.factory import populate


def test_with_r_writes_labelled_r_data_beside_the_tables(study: Any, tmp_path: Path) -> None:
    populate(study, 4, seed=5)
    out = tmp_path / "export"
    call_command("export_study", study.slug, "--out", str(out), "--with-r", stdout=StringIO())
    names = {p.name for p in out.iterdir()}
    assert {"evaluations.csv", "evaluations.rds", "evaluations.sav", "analysis.R"} <= names
    ev_csv = pd.read_csv(out / "evaluations.csv")
    ev_r = pyreadr.read_r(str(out / "evaluations.rds"))[None]
    assert len(ev_r) == len(ev_csv) == 20
    # a coded item is a factor whose levels are the codebook's labels, in code order
    item = next(c for c in ev_r.columns if c.startswith("cf_"))
    assert isinstance(ev_r[item].dtype, pd.CategoricalDtype)
    assert "analysis.R" in names and "mgcv" in (out / "analysis.R").read_text()


def test_without_the_flag_the_export_is_the_tables_only(study: Any, tmp_path: Path) -> None:
    populate(study, 2, seed=6)
    out = tmp_path / "export"
    call_command("export_study", study.slug, "--out", str(out), stdout=StringIO())
    assert not any(p.suffix in (".rds", ".sav", ".R") for p in out.iterdir())


# --- the streamed ZIP (console download) --------------------------------------------------
def _stream_bytes(study: Any, **kwargs: Any) -> bytes:
    from studyapp.export import export_zip_stream

    pieces = list(export_zip_stream(study, **kwargs))
    assert len(pieces) > 1 and all(pieces)  # still produced in pieces, none empty
    return b"".join(pieces)


def _stream(study: Any, **kwargs: Any) -> zipfile.ZipFile:
    return zipfile.ZipFile(io.BytesIO(_stream_bytes(study, **kwargs)))


def _labels(allowed: str) -> list[str]:
    """'1=a; 2=b' -> ['a', 'b'], split here by hand rather than with analysis.r_export's parser."""
    return [part.split("=", 1)[1].strip() for part in allowed.split(";")]


def test_streamed_zip_with_r_round_trips(study: Any, tmp_path: Path) -> None:
    populate(study, 12, seed=7)
    zf = _stream(study, with_r=True, chunk_size=7)
    assert zf.testzip() is None
    assert set(R_FILES) <= set(zf.namelist())
    zf.extractall(tmp_path / "unzipped")
    folder = tmp_path / "unzipped"
    ev_csv = pd.read_csv(folder / "evaluations.csv")
    ev_r = pyreadr.read_r(str(folder / "evaluations.rds"))[None]
    assert len(ev_r) == len(ev_csv) == 60
    book = pd.read_csv(folder / "codebook.csv", keep_default_na=False).set_index(["file", "column"])
    coded = [c for c in ev_r.columns if c.startswith("cf_") or c in ("acceptance", "action")]
    factors = [c for c in coded if isinstance(ev_r[c].dtype, pd.CategoricalDtype)]
    assert {"acceptance", "action"} <= set(factors) and any(c.startswith("cf_") for c in factors)
    for col in factors:
        levels = _labels(book.loc[("evaluations.csv", col), "allowed"])
        assert list(ev_r[col].cat.categories) == levels, col
        # level number = the CSV's code, row by row
        assert (ev_r[col].cat.codes.to_numpy() + 1 == ev_csv[col].to_numpy()).all(), col
    frame, meta = pyreadstat.read_sav(str(folder / "participants.sav"))
    assert len(frame) == len(pd.read_csv(folder / "participants.csv"))
    assert "mgcv" in (folder / "analysis.R").read_text()
    # the folder export with --with-r holds the same R data
    call_command(
        "export_study", study.slug, "--out", str(tmp_path / "f"), "--with-r", stdout=StringIO()
    )
    same = pyreadr.read_r(str(tmp_path / "f" / "evaluations.rds"))[None]
    pd.testing.assert_frame_equal(same, ev_r)
    # the analysis commands still take the ZIP
    archive = tmp_path / "export.zip"
    archive.write_bytes(_stream_bytes(study, with_r=True))
    assert len(load_export(archive).evaluations) == 60
    r = run_analysis("to-r", "--export", str(archive), "--out", str(tmp_path / "again"))
    assert r.returncode == 0, r.stderr
    _run_analysis_r(folder)


def _run_analysis_r(folder: Path) -> None:
    """analysis.R on the unzipped folder, where R with mgcv is installed."""
    if shutil.which("Rscript") is None:
        if services_required():
            pytest.fail(
                "Rscript is required (RECOURSE_REQUIRE_SERVICES=1): apt-get install r-base-core r-cran-mgcv"
            )
        return
    run = subprocess.run(
        ["Rscript", str(folder / "analysis.R"), str(folder)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    est = pd.read_csv(folder / "mgcv_estimates.csv")
    assert {f"Model-{i}" for i in range(1, 5)} <= set(est["model"])
    kept = int((pd.read_csv(folder / "evaluations.csv")["any_impossible"] == 0).sum())
    assert (est["n"] == kept).all()


def test_a_failing_r_step_leaves_a_note_not_a_broken_zip(study: Any, monkeypatch: Any) -> None:
    import analysis.r_export

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise ValueError("column name too long for SPSS")

    monkeypatch.setattr(analysis.r_export, "write_r_data", refuse)
    populate(study, 3, seed=10)
    zf = _stream(study, with_r=True)
    assert zf.testzip() is None and "evaluations.parquet" in zf.namelist()
    assert not any(n.endswith((".rds", ".sav", ".R")) for n in zf.namelist())
    assert "column name too long for SPSS" in zf.read("r_data_error.txt").decode()


def test_streamed_zip_leaves_r_out_unless_asked(study: Any) -> None:
    populate(study, 3, seed=8)
    names = _stream(study).namelist()
    assert not any(n.endswith((".rds", ".sav", ".R")) for n in names)


def test_streamed_zip_of_a_study_without_evaluations_has_no_r_data(study: Any) -> None:
    names = _stream(study, with_r=True).namelist()
    assert "evaluations.csv" in names
    assert not any(n.endswith((".rds", ".sav", ".R")) for n in names)


def test_console_download_takes_the_r_option(study: Any) -> None:
    from tests.studyapp.console.conftest import client_for, researcher

    populate(study, 3, seed=9)
    client = client_for(researcher("analyst", superuser=True))
    url = f"/console/studies/{study.slug}/export.zip"
    r = client.get(url + "?r=1")
    assert r.status_code == 200 and r.streaming
    names = zipfile.ZipFile(io.BytesIO(b"".join(r.streaming_content))).namelist()
    assert set(R_FILES) <= set(names)
    plain = zipfile.ZipFile(io.BytesIO(b"".join(client.get(url).streaming_content)))
    assert not any(n.endswith(".rds") for n in plain.namelist())
    assert client.get(url + "?r=maybe").status_code == 404


def test_api_export_takes_with_r(study: Any) -> None:
    from tests.studyapp.console.conftest import client_for, researcher

    populate(study, 3, seed=11)
    client = client_for(researcher("api-analyst", superuser=True))
    url = f"/api/studies/{study.slug}/export/"
    r = client.get(url + "?with_r=1")
    assert r.status_code == 200
    names = zipfile.ZipFile(io.BytesIO(b"".join(r.streaming_content))).namelist()
    assert set(R_FILES) <= set(names)
    bad = client.get(url + "?with_r=perhaps")
    assert bad.status_code == 400 and "with_r" in bad.json()
