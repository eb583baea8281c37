"""export_study: docs/export.md's columns exactly, values as stored, a codebook entry per column,
and a folder the analysis package's own loader accepts."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from analysis.export import load_export
from studyapp.models import Evaluation, Participant
from tests.studyapp.conftest import ELIGIBLE, SCHEMA, start
from tests.studyapp.console.factory import populate

from .design_columns import DESIGN_COLUMNS, DESIGN_TAIL


@pytest.fixture
def finished(study: Any, eager: None) -> Any:
    """Two participants who completed (one marks an item impossible) and one screened out."""
    for n in range(2):
        w = start(Client(), study)
        w.to_profile()
        w.submit_profile()
        while w.participant.state == Participant.State.EVALUATING:
            data = w.evaluation_data(acceptance=str(2 + n), action_why=f"reason {n}")
            if n == 1 and w.page() == "evaluation-2":
                first_changed = next(k for k in data if k.startswith("impossible_"))
                data[first_changed] = "yes"
            w.post(data)
    out = start(Client(), study)
    out.screening({**ELIGIBLE, "car_purchase": "5"})
    return study


def _export(study: Any, out: Path, *args: str) -> str:
    buf = io.StringIO()
    call_command("export_study", study.slug, "--out", str(out), *args, stdout=buf)
    return buf.getvalue()


def test_evaluations_csv_matches_design_and_database(finished: Any, tmp_path: Path) -> None:
    msg = _export(finished, tmp_path)
    assert "3 participants" in msg
    ev = pd.read_csv(tmp_path / "evaluations.csv", keep_default_na=False)
    items = [f"x_{k}" for k in SCHEMA.keys] + [f"cf_{k}" for k in SCHEMA.keys]
    no_text = [c for c in DESIGN_COLUMNS if not c.endswith("_why")]
    assert list(ev.columns) == no_text + items + DESIGN_TAIL
    assert len(ev) == 10
    for row in ev.to_dict("records"):
        e = Evaluation.objects.select_related("recourse", "participant").get(
            recourse_id=row["recourse"]
        )
        r, p = e.recourse, e.participant
        assert row["participant"] == p.pk and row["study"] == finished.slug
        assert (row["gender"], row["age"], row["income"]) == ("Female", 34, 3_500_000)
        assert (row["strategy"], row["position"], row["sparsity"]) == (
            r.strategy,
            r.position,
            r.sparsity,
        )
        assert row["proximity"] == pytest.approx(r.proximity)
        assert (row["origin"], row["method"]) == (r.origin, r.method) == ("pool", "pool_search")
        assert (row["sparsity_rank"], row["proximity_rank"]) == (r.sparsity_rank, r.proximity_rank)
        # pool picks: no method parameters, no fit, no fallback
        assert (row["method_params"], row["fit_version"], row["fallback"]) == ("{}", "", "")
        assert row["sparsity_rank"] >= 1 and row["proximity_rank"] >= 1
        assert row["changed"] == ";".join(r.changed)
        assert row["impossible"] == ";".join(e.impossible)
        assert row["any_impossible"] == int(bool(e.impossible))
        assert (row["acceptance"], row["action"]) == (e.acceptance, e.action)
        for k in SCHEMA.keys:
            assert row[f"x_{k}"] == p.profile.values[k] and row[f"cf_{k}"] == r.values[k]
    assert ev["any_impossible"].sum() == 1
    by_strategy = ev.groupby("strategy")
    assert (by_strategy.get_group("sparsest")["sparsity_rank"] == 1).all()
    assert (by_strategy.get_group("proximate")["proximity_rank"] == 1).all()


def test_panel_id_and_access_code_never_exported(study: Any, eager: None, tmp_path: Path) -> None:
    w = start(Client(), study, "?PROLIFIC_PID=PANEL12345")
    w.to_profile()
    w.submit_profile()
    w.post(w.evaluation_data())
    _export(study, tmp_path, "--with-text")
    text = "".join(p.read_text() for p in tmp_path.glob("*.csv"))
    assert "PANEL12345" not in text and w.participant.code not in text


def test_with_text_and_parquet(finished: Any, tmp_path: Path) -> None:
    _export(finished, tmp_path, "--with-text", "--parquet")
    ev = pd.read_csv(tmp_path / "evaluations.csv", keep_default_na=False)
    assert list(ev.columns[: len(DESIGN_COLUMNS)]) == DESIGN_COLUMNS
    assert set(ev["action_why"]) == {"reason 0", "reason 1"}
    pq = pd.read_parquet(tmp_path / "evaluations.parquet")
    assert list(pq.columns) == list(ev.columns) and len(pq) == len(ev)
    assert (pq["acceptance"].to_numpy() == ev["acceptance"].to_numpy()).all()
    pa = pd.read_parquet(tmp_path / "participants.parquet")
    assert len(pa) == 3


def test_participants_csv(finished: Any, tmp_path: Path) -> None:
    _export(finished, tmp_path)
    pa = pd.read_csv(tmp_path / "participants.csv", keep_default_na=False)
    assert len(pa) == 3
    assert sorted(pa["outcome"]) == ["completed", "completed", "screened_out"]
    done = pa[pa["outcome"] == "completed"]
    assert (done["n_evaluations"] == 5).all() and (done["consent_version"] != "").all()
    assert set(done["screen_loans"].astype(str)) == {"8"}
    for k in SCHEMA.keys:
        assert (done[f"x_{k}"] == "1").all()
        assert pa.loc[pa["outcome"] == "screened_out", f"x_{k}"].iloc[0] == ""


def test_codebook_describes_every_column(finished: Any, tmp_path: Path) -> None:
    _export(finished, tmp_path, "--with-text")
    cb = pd.read_csv(tmp_path / "codebook.csv", keep_default_na=False)
    for name in ("evaluations.csv", "participants.csv"):
        cols = list(pd.read_csv(tmp_path / name, nrows=0).columns)
        assert list(cb.loc[cb["file"] == name, "column"]) == cols
    assert (cb["description"] != "").all() and (cb["type"] != "").all()
    edu = cb[(cb["file"] == "evaluations.csv") & (cb["column"] == "cf_education")].iloc[0]
    assert edu["allowed"].startswith("1=High school; 2=Junior college")
    acc = cb[cb["column"] == "acceptance"].iloc[0]
    assert acc["allowed"].startswith("1=Strongly no") and acc["allowed"].endswith("7=Strongly yes")


def test_analysis_loader_accepts_the_export(finished: Any, tmp_path: Path) -> None:
    _export(finished, tmp_path)
    exp = load_export(tmp_path)
    assert len(exp.evaluations) == 10 and exp.items == SCHEMA.keys
    assert exp.schema is not None and exp.schema.hash() == SCHEMA.hash()
    assert len(exp.kept_evaluations()) == 9


def test_bad_arguments_write_nothing(finished: Any, tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="no study 'nope'") as exc:
        call_command("export_study", "nope", "--out", str(tmp_path / "a"))
    assert exc.value.returncode == 2 and not (tmp_path / "a").exists()
    target = tmp_path / "file.txt"
    target.write_text("keep")
    with pytest.raises(CommandError, match="not a folder"):
        call_command("export_study", finished.slug, "--out", str(target))
    assert target.read_text() == "keep"
    with pytest.raises(CommandError, match="--out"):
        call_command("export_study", finished.slug)


# --- the streamed ZIP (console download) --------------------------------------------------
@pytest.fixture
def seeded(study: Any) -> Any:
    """12 completed participants (panel ids, free text) and a few who did not finish."""
    populate(study, 12, seed=1)
    S = Participant.State
    for state in (S.SCREENED_OUT, S.EVALUATING, S.QUOTA_FULL):
        Participant.objects.create(study=study, state=state, screening={"gender": "2"})
    return study


def _zip(study: Any, **kwargs: Any) -> zipfile.ZipFile:
    from studyapp.export import export_zip_stream

    pieces = list(export_zip_stream(study, **kwargs))
    assert len(pieces) > 1 and all(pieces)  # produced in pieces, none empty
    return zipfile.ZipFile(io.BytesIO(b"".join(pieces)))


def _all_text(zf: zipfile.ZipFile) -> str:
    return b"".join(zf.read(n) for n in zf.namelist()).decode("utf-8", "replace")


@pytest.mark.parametrize("chunk_size", [1, 5, 2000])
def test_streamed_zip_equals_the_frames(seeded: Any, chunk_size: int) -> None:
    from studyapp.export import (
        codebook_frame,
        evaluations_frame,
        page_visits_frame,
        participants_frame,
    )

    zf = _zip(seeded, with_text=True, with_panel_ids=True, chunk_size=chunk_size)
    assert zf.testzip() is None
    assert zf.namelist() == [
        "evaluations.csv", "participants.csv", "page_visits.csv", "participants_wide.csv",
        "codebook.csv", "schema.json", "evaluations.parquet", "participants.parquet",
        "page_visits.parquet", "participants_wide.parquet",
    ]  # fmt: skip
    ev = evaluations_frame(seeded, with_text=True)
    pa = participants_frame(seeded, with_panel_ids=True)
    assert len(ev) == 60 and len(pa) == 15
    assert zf.read("evaluations.csv").decode() == ev.to_csv(index=False)
    assert zf.read("participants.csv").decode() == pa.to_csv(index=False)
    pv = page_visits_frame(seeded)
    assert zf.read("page_visits.csv").decode() == pv.to_csv(index=False)
    cb = codebook_frame(
        seeded,
        {
            "evaluations.csv": list(ev.columns),
            "participants.csv": list(pa.columns),
            "page_visits.csv": list(pv.columns),
        },
    )
    # the wide table's rows follow (tests/studyapp/export/test_wide.py)
    assert zf.read("codebook.csv").decode().startswith(cb.to_csv(index=False))
    for name, frame in (("evaluations", ev), ("participants", pa), ("page_visits", pv)):
        pq = pd.read_parquet(io.BytesIO(zf.read(f"{name}.parquet")))
        assert list(pq.columns) == list(frame.columns) and len(pq) == len(frame)
        for col in frame.columns:
            left = frame[col].astype(object).where(frame[col].notna(), None).tolist()
            right = pq[col].astype(object).where(pq[col].notna(), None).tolist()
            assert left == right, col


def test_streamed_zip_privacy_defaults(seeded: Any) -> None:
    zf = _zip(seeded)
    text = _all_text(zf)
    assert "PANEL1-0" not in text and "my reason" not in text and "STUDY_ID" not in text
    codes = Participant.objects.filter(study=seeded).values_list("code", flat=True)
    assert not any(code in text for code in codes)
    pa = pd.read_csv(io.BytesIO(zf.read("participants.csv")))
    assert "recruitment_id" not in pa.columns and "panel" not in pa.columns
    ev = pd.read_csv(io.BytesIO(zf.read("evaluations.csv")))
    assert "acceptance_why" not in ev.columns
    full = _zip(seeded, with_panel_ids=True, with_text=True)
    pa = pd.read_csv(io.BytesIO(full.read("participants.csv")), keep_default_na=False)
    assert sorted(pa["recruitment_id"])[:2] == ["", ""] and "PANEL1-0" in set(pa["recruitment_id"])
    assert "my reason" in full.read("evaluations.csv").decode()
    assert not any(code in _all_text(full) for code in codes)


def test_outcomes_of_new_states_and_attention_exclusion(study: Any) -> None:
    S = Participant.State
    study.attention_max_failures = 1
    study.save()
    for state, failures in [
        (S.QUOTA_FULL, 0), (S.FAILED_ATTENTION, 2), (S.WITHDRAWN, 0),
        (S.COMPLETED, 1), (S.COMPLETED, 2), (S.EVALUATING, 0),
    ]:  # fmt: skip
        Participant.objects.create(study=study, state=state, attention_failures=failures)
    pa = pd.read_csv(io.BytesIO(_zip(study).read("participants.csv")), keep_default_na=False)
    assert list(pa["outcome"]) == [
        "quota_full", "failed_attention", "withdrew", "completed", "completed", "incomplete",
    ]  # fmt: skip
    assert list(pa["attention_excluded"]) == [0, 1, 0, 0, 1, 0]
    assert list(pa["attention_failures"]) == [0, 2, 0, 1, 2, 0]


def test_command_with_panel_ids(seeded: Any, tmp_path: Path) -> None:
    _export(seeded, tmp_path / "plain")
    assert "PANEL1-0" not in (tmp_path / "plain" / "participants.csv").read_text()
    _export(seeded, tmp_path / "ids", "--with-panel-ids", "--parquet")
    pa = pd.read_parquet(tmp_path / "ids" / "participants.parquet")
    assert "PANEL1-0" in set(pa["recruitment_id"])
