"""The study as one file: export -> import -> export is byte-identical (the demo study and a
study with every setting used), the imported study runs with bots, and a bad file is refused
with a path-named message and nothing created."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from studyapp.definition import study_file as sf
from studyapp.models import Participant, Study
from studyapp.prereg import study_files
from studyapp.studies import services
from tests.studyapp.prereg.conftest import EVERY_SETTING

ROOT = Path(__file__).resolve().parents[3]


def run(*args: str) -> str:
    buf = io.StringIO()
    call_command("study", *args, stdout=buf)
    return buf.getvalue()


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def round_trip(slug: str, tmp_path: Path) -> tuple[dict[str, bytes], dict[str, bytes]]:
    run("export", slug, "--out", str(tmp_path / "a"))
    out = run("import", str(tmp_path / "a"), "--slug", f"{slug}-copy")
    assert f"created study {slug}-copy (draft)" in out
    run("export", f"{slug}-copy", "--out", str(tmp_path / "b"))
    return folder_bytes(tmp_path / "a"), folder_bytes(tmp_path / "b")


def test_demo_study_round_trip_is_byte_identical_and_runs_with_bots(
    transactional_db: Any, settings: Any, tmp_path: Path, eager: Any
) -> None:
    settings.VAR_DIR = tmp_path
    call_command("create_demo_study", "--pool-size", "300", "--no-admin", stdout=io.StringIO())
    first, second = round_trip("carloan", tmp_path)
    assert sorted(first) == ["pool.csv", "study.json"]
    assert first == second
    doc = json.loads(first["study.json"])
    assert doc["format_version"] == 1 and doc["pool"]["sha256"] == sf.sha256(first["pool.csv"])
    # the imported study is a draft of its own; live, bots walk it to the end
    copy = Study.objects.get(slug="carloan-copy")
    assert copy.state == "draft" and copy.pool_csv == Study.objects.get(slug="carloan").pool_csv
    services.study_set_state(study=copy, state=Study.State.LIVE)
    call_command(
        "simulate_participants", "carloan-copy", "--n", "3", "--eager", stdout=io.StringIO()
    )
    states = list(Participant.objects.filter(study=copy).values_list("state", flat=True))
    assert len(states) == 3 and "completed" in states


def test_every_setting_round_trip_is_byte_identical(every: Study, tmp_path: Path) -> None:
    first, second = round_trip("every", tmp_path)
    assert sorted(first) == ["decision_model.bin", "pool.csv", "study.json"]
    assert first == second
    settings = json.loads(first["study.json"])["settings"]
    # every setting the study was given is in the file, as given
    for name in ("conditions", "quotas", "languages", "assignment", "release_mode"):
        assert settings[name] == EVERY_SETTING[name], name
    for given, stored in zip(EVERY_SETTING["questions"], settings["questions"], strict=True):
        assert [stored[k] for k in ("key", "page", "type")] == [
            given[k] for k in ("key", "page", "type")
        ]
    assert settings["questions"][1]["show_if"]["all"][0]["question"] == "q.car"
    assert settings["questions"][2]["end_if"]["all"][0]["value"] == 2
    assert settings["retention"]["paradata"] == {"days": 30, "after": "completion"}
    assert settings["texts"]["ja"]["welcome"] == "こんにちは"
    assert settings["method_params"] == {"wachter": {"lam": 0.05}}
    copy = Study.objects.get(slug="every-copy")
    assert bytes(copy.decision_model_blob) == bytes(every.decision_model_blob)
    assert list(copy.conditions.values_list("name", flat=True)) == ["sparse", "mixed"]


def test_the_zip_reads_back_and_is_stable(every: Study) -> None:
    data = study_files.study_file_zip(every)
    assert data == study_files.study_file_zip(every)
    doc, files = study_files.files_of_zip(data)
    study = study_files.study_file_create(data=doc, files=files, slug="from-zip")
    assert study_files.study_file_zip(study) == data


def test_the_published_schema_is_the_models(every: Study, tmp_path: Path) -> None:
    committed = json.loads((ROOT / "docs/schema/study-file.schema.json").read_text())
    assert committed == sf.file_json_schema()
    import jsonschema

    run("export", "every", "--out", str(tmp_path / "a"))
    jsonschema.validate(json.loads((tmp_path / "a/study.json").read_text()), committed)


def _edit(folder: Path, change: Any) -> None:
    doc = json.loads((folder / "study.json").read_text())
    change(doc)
    (folder / "study.json").write_text(json.dumps(doc))


BAD = [
    ("unknown format version", lambda d: d.update(format_version=2),
     "format_version: unknown format version 2; this platform reads version 1"),
    ("schema violation", lambda d: d["settings"].update(design="sparsest:1,proxmate:1"),
     "settings.design[1]: unknown strategy"),
    ("unknown setting", lambda d: d["settings"].update(desing="x"),
     "settings.desing: unknown field"),
    ("bad envelope", lambda d: d["pool"].update(rows="many"), "pool.rows:"),
    ("bad quota", lambda d: d["settings"]["quotas"].append({"condition": "nosuch", "limit": 3}),
     "settings.quotas[3].condition"),
]  # fmt: skip


@pytest.mark.parametrize(("what", "change", "message"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_file_is_refused_by_path_and_creates_nothing(
    every: Study, tmp_path: Path, what: str, change: Any, message: str
) -> None:
    run("export", "every", "--out", str(tmp_path / "a"))
    _edit(tmp_path / "a", change)
    before = Study.objects.count()
    with pytest.raises(CommandError) as caught:
        run("import", str(tmp_path / "a"), "--slug", "bad")
    assert message in str(caught.value)
    assert Study.objects.count() == before and not Study.objects.filter(slug="bad").exists()


def test_a_pool_whose_hash_does_not_match_is_refused(every: Study, tmp_path: Path) -> None:
    run("export", "every", "--out", str(tmp_path / "a"))
    pool = tmp_path / "a/pool.csv"
    pool.write_bytes(pool.read_bytes().replace(b"\n", b"\r\n", 1))
    with pytest.raises(
        CommandError, match=r"pool\.sha256: pool\.csv has SHA-256 [0-9a-f]{64}, not"
    ):
        run("import", str(tmp_path / "a"), "--slug", "bad")
    shutil.copy(tmp_path / "a/study.json", tmp_path / "study.json")
    (tmp_path / "a/decision_model.bin").write_bytes(b"not a model")
    with pytest.raises(CommandError, match=r"decision_model\.sha256"):
        run("import", str(tmp_path / "a"), "--slug", "bad")
    assert not Study.objects.filter(slug="bad").exists()


def test_a_taken_slug_and_a_missing_folder_are_refused(every: Study, tmp_path: Path) -> None:
    run("export", "every", "--out", str(tmp_path / "a"))
    with pytest.raises(CommandError, match="slug 'every': a study with this slug exists"):
        run("import", str(tmp_path / "a"), "--slug", "every")
    with pytest.raises(CommandError, match="study.json: missing"):
        run("import", str(tmp_path), "--slug", "other")
