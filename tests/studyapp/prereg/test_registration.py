"""Versions and pre-registration: every change is a numbered version with who and when; going
live freezes a registration whose hash is stable across exports; one edit after it is exactly
one entry of the deviation report; models not registered are marked exploratory."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from studyapp.models import Study, StudyRegistration
from studyapp.prereg import bundle, deviations, history
from studyapp.studies import services, updates
from tests.studyapp.conftest import make_study


def run(*args: str) -> str:
    buf = io.StringIO()
    call_command("study", *args, stdout=buf)
    return buf.getvalue()


@pytest.fixture
def draft(transactional_db: Any) -> Study:
    return make_study(slug="reg", state="draft")


def test_each_change_is_a_numbered_version_with_who(draft: Study) -> None:
    alice = get_user_model().objects.create_user("alice", is_staff=True)
    assert list(draft.versions.values_list("number", flat=True)) == [1]
    with history.acting_as(alice):
        updates.study_update(study=draft, changes={"design": "sparsest:2,random:1"})
    updates.study_update(study=draft, changes={"title": "Renamed"})
    updates.study_update(study=draft, changes={"title": "Renamed"})  # no change: no version
    versions = list(draft.versions.order_by("number"))
    assert [v.number for v in versions] == [1, 2, 3]
    assert versions[1].by == alice and versions[2].by is None
    assert versions[1].document["settings"]["design"] == "sparsest:2,random:1"
    out = run("diff", "reg", "2", "3")
    assert out.strip() == 'settings.title: "Car loan (test)" -> "Renamed"'
    listing = run("versions", "reg", "--no-progress").splitlines()
    assert len(listing) == 3 and " alice " in listing[1]


def test_going_live_registers_once_and_the_hash_is_stable(draft: Study, tmp_path: Path) -> None:
    services.study_set_state(study=draft, state=Study.State.LIVE)
    services.study_set_state(study=draft, state=Study.State.CLOSED)
    services.study_set_state(study=draft, state=Study.State.LIVE)
    regs = list(StudyRegistration.objects.filter(study=draft))
    assert len(regs) == 1 and regs[0].reason == "live"
    # the same definition registered again gives the same bytes; exports are the stored bytes
    run("register", "reg", "--out", str(tmp_path / "a"))
    run("register", "reg", "--out", str(tmp_path / "b"))
    a, b = (
        (tmp_path / "a/registration.json").read_bytes(),
        (tmp_path / "b/registration.json").read_bytes(),
    )
    assert a == b == bundle.bundle_bytes(regs[0])
    import hashlib

    assert hashlib.sha256(a).hexdigest() == regs[0].sha256
    md = (tmp_path / "a/registration.md").read_text()
    for section in ("Study information", "Design plan", "Sampling plan", "Variables",
                    "Analysis plan", "Other"):  # fmt: skip
        assert re.search(rf"^## \d\. {section}", md, re.M), section
    assert regs[0].sha256 in md
    plan = json.loads(a)["analysis_plan"]
    assert plan["seeds"] == {"recourse_selection": 7}
    assert plan["models"]["acceptance_proximity"] == (
        "acceptance ~ s(proximity, k = 10) + s(participant, bs = 're') "
        "+ s(participant, proximity, bs = 're')"
    )


def test_one_edit_after_registration_is_one_deviation(draft: Study, tmp_path: Path) -> None:
    services.study_set_state(study=draft, state=Study.State.LIVE)
    assert deviations.study_deviations(draft)["deviations"] == []
    updates.study_update(study=draft, changes={"waiting_timeout_s": 120})
    report = deviations.study_deviations(draft)
    assert len(report["deviations"]) == 1
    entry = report["deviations"][0]
    assert entry["kind"] == "edit_after_registration" and entry["version"] == 2
    assert entry["changes"] == ["settings.waiting_timeout_s: 60 -> 120"]
    run("deviations", "reg", "--out", str(tmp_path))
    assert "1. Edit after registration: version 2" in (tmp_path / "deviations.md").read_text()


def test_models_not_registered_are_exploratory(draft: Study, tmp_path: Path) -> None:
    services.study_set_state(study=draft, state=Study.State.LIVE)
    plan = json.loads(bundle.first_registration(draft).bundle)["analysis_plan"]
    models = tmp_path / "models.txt"
    extra = "acceptance ~ strategy + s(sparsity, k = 5) + s(participant, bs = 're')"
    models.write_text("\n".join([*plan["models"].values(), extra]) + "\n")
    report = deviations.study_deviations(draft, models_run=deviations.models_run_read(models))
    assert report["deviations"] == [{"kind": "exploratory_model", "formula": extra}]
    models.write_text(extra + "\n")
    report = deviations.study_deviations(draft, models_run=deviations.models_run_read(models))
    kinds = [d["kind"] for d in report["deviations"]]
    assert kinds.count("registered_model_not_run") == len(plan["models"])


def test_sample_size_against_the_registered_quota(draft: Study) -> None:
    updates.study_update(study=draft, changes={"quotas": [{"limit": 50}]})
    services.study_set_state(study=draft, state=Study.State.LIVE)
    report = deviations.study_deviations(draft)
    assert report["deviations"] == [{"kind": "sample_size", "registered": 50, "observed": 0}]


def test_deviations_without_registration_are_refused(draft: Study, tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="study reg has no registration"):
        run("deviations", "reg", "--out", str(tmp_path / "d"))
    assert not (tmp_path / "d").exists()
