"""The signals travel with a page's submit only, are stored when the study has them on, and
never cost a participant an answer; the setting is a draft's, and the consent page says so."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from django.test import Client

from studyapp.definition.errors import StudyFrozen
from studyapp.integrity.payload import FIELD
from studyapp.models import Evaluation, IntegrityRecord, Study
from studyapp.retention.classes import CLASSES
from studyapp.studies import updates
from studyapp.studies.duplicate import study_duplicate
from tests.studyapp.conftest import make_study, start
from tests.studyapp.integrity.conftest import integrity_study

NOTICE = 'id="integrity-notice"'
SCRIPT = "studyapp/integrity.js"


def _payload(**fields: Any) -> str:
    return json.dumps({"v": 1, "page_ms": 20_000, "hidden": 1, "away_ms": 3_000, "fields": fields})


def _to_plans(study: Study) -> Any:
    w = start(Client(), study)
    consent = w.get().content.decode()
    w.to_profile()
    w.submit_profile()
    return w, consent


@pytest.mark.parametrize("on", [True, False])
def test_the_consent_page_and_the_plan_pages_carry_the_script_only_when_on(
    on: bool, transactional_db: Any, eager: None
):
    study = integrity_study(on=on)
    w, consent = _to_plans(study)
    page = w.get().content.decode()
    assert w.page().startswith("evaluation-")
    assert (NOTICE in consent) is on
    assert (f'name="{FIELD}"' in page) is on and (SCRIPT in page) is on
    r = w.post(w.evaluation_data(**{FIELD: _payload(acceptance_why={"pastes": 1})}))
    assert r.status_code == 302
    assert Evaluation.objects.filter(participant=w.participant).count() == 1
    assert IntegrityRecord.objects.filter(participant=w.participant).exists() is on


def test_a_bad_payload_is_logged_and_the_answers_are_kept(
    transactional_db: Any, eager: None, caplog: Any
):
    study = integrity_study()
    w, _ = _to_plans(study)
    bad = _payload(password={"inputs": 1})
    with caplog.at_level(logging.WARNING, logger="studyapp.integrity.record"):
        r = w.post(w.evaluation_data(**{FIELD: bad}))
    assert r.status_code == 302
    assert Evaluation.objects.filter(participant=w.participant).count() == 1
    assert not IntegrityRecord.objects.exists()
    assert "'password' is not a field of this page" in caplog.text
    with caplog.at_level(logging.WARNING, logger="studyapp.integrity.record"):
        r = w.post(w.evaluation_data(**{FIELD: "x" * 20_000}))
    assert r.status_code == 302 and Evaluation.objects.count() == 2
    assert "bytes; at most" in caplog.text and not IntegrityRecord.objects.exists()


def test_a_page_sent_back_adds_its_second_submit_to_the_first(transactional_db: Any, eager: None):
    study = integrity_study()
    w, _ = _to_plans(study)
    first = _payload(
        acceptance_why={"pastes": 1, "pasted_chars": 50, "inputs": 1, "first_ms": 9000}
    )
    r = w.post(w.evaluation_data(acceptance="", **{FIELD: first}))  # no rating: sent back
    assert r.status_code == 400 and not Evaluation.objects.exists()
    second = _payload(
        acceptance={"inputs": 1, "first_ms": 1000},
        acceptance_why={"inputs": 4, "typing_ms": 700, "first_ms": 500},
    )
    assert w.post(w.evaluation_data(**{FIELD: second})).status_code == 302
    (rec,) = IntegrityRecord.objects.all()
    assert rec.submissions == 2 and rec.page_ms == 40_000 and rec.hidden == 2
    assert rec.pastes == 1 and rec.typing_ms == 700
    # the first answer stays the first submit's; a field first answered on the second
    # submit counts from the page's first showing (the first submit had it open 20 s)
    assert rec.fields["acceptance_why"] == {
        "pastes": 1, "pasted_chars": 50, "inputs": 5, "typing_ms": 700, "first_ms": 9000,
    }  # fmt: skip
    assert rec.fields["acceptance"]["first_ms"] == 21_000


def test_the_retention_schedules_paradata_class_deletes_the_records(
    transactional_db: Any, eager: None
):
    study = integrity_study()
    w, _ = _to_plans(study)
    w.post(w.evaluation_data(**{FIELD: _payload(acceptance={"inputs": 1})}))
    pid = w.participant.pk
    paradata = CLASSES["paradata"]
    assert pid in paradata.holding(study, [pid])
    detail = paradata.erase(study, [pid], False)
    assert detail["IntegrityRecord rows"] == 1
    assert not IntegrityRecord.objects.exists()
    assert Evaluation.objects.filter(participant_id=pid).exists()  # the answers stay


def test_the_setting_is_a_drafts_and_travels_with_a_copy(transactional_db: Any):
    study = make_study(slug="draft", state="draft")
    assert updates.study_config(study)["integrity_signals"] is False
    study = updates.study_update(study=study, changes={"integrity_signals": True})
    study.refresh_from_db()
    assert study.integrity_signals is True
    copy = study_duplicate(study=study, slug="copy", owner=None)
    assert copy.integrity_signals is True
    live = integrity_study("live", on=False)
    with pytest.raises(StudyFrozen, match="integrity_signals"):
        updates.study_update(study=live, changes={"integrity_signals": True})


def test_the_console_switches_the_signals_on_for_a_draft_and_shows_them_for_a_live_study(
    transactional_db: Any,
):
    from tests.studyapp.console.conftest import change_data, change_url, client_for, researcher

    owner = researcher("owner")
    draft = make_study(slug="draft", state="draft")
    Study.objects.filter(pk=draft.pk).update(owner=owner)
    client = client_for(owner)
    page = client.get(change_url(draft)).content.decode()
    assert 'name="integrity_signals"' in page
    r = client.post(change_url(draft), change_data(draft, integrity_signals="on"))
    assert r.status_code == 302, r.content.decode()[:2000]
    draft.refresh_from_db()
    assert draft.integrity_signals is True
    live = integrity_study("live")
    Study.objects.filter(pk=live.pk).update(owner=owner)
    page = client.get(change_url(live)).content.decode()
    assert 'name="integrity_signals"' not in page and "Integrity signals" in page
