"""Recruitment: the welcome page creates nothing, panel ids are captured and resume their
own session, bad panel parameters get a clear 400, every outcome has its code and return
link."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from studyapp.models import Participant, Quota, Study
from studyapp.participation import flow
from studyapp.participation import services as flow_services
from studyapp.studies import services as study_services
from tests.studyapp.conftest import ELIGIBLE, PROFILE, Walker, start

S = Participant.State
PROLIFIC = "?PROLIFIC_PID=5f3a9c&STUDY_ID=st42&SESSION_ID=se77"


def test_welcome_page_creates_nothing(client: Client, study: Study) -> None:
    for _ in range(3):  # a chat app's link preview, a reload, the participant
        r = client.get(f"/s/{study.slug}/{PROLIFIC}")
        assert r.status_code == 200
    body = r.content.decode()
    assert study.page_texts["welcome"][:40] in body and 'id="start"' in body
    for name, value in (("PROLIFIC_PID", "5f3a9c"), ("STUDY_ID", "st42"), ("SESSION_ID", "se77")):
        assert f'<input type="hidden" name="{name}" value="{value}">' in body
    assert Participant.objects.count() == 0


def test_prolific_ids_are_captured_and_resume(study: Study) -> None:
    a = start(Client(), study, PROLIFIC)
    p = a.participant
    assert p.recruitment_id == "5f3a9c" and p.panel == {"STUDY_ID": "st42", "SESSION_ID": "se77"}
    a.screening()
    b = start(Client(), study, PROLIFIC)  # another browser, same panel member
    assert b.url == a.url and Participant.objects.count() == 1
    assert b.page() == "scenario"  # where they left off (consent came first)


def test_mturk_ids(study: Study) -> None:
    w = start(Client(), study, "?workerId=A1B2C3&assignmentId=3XYZ&hitId=H9")
    p = w.participant
    assert p.recruitment_id == "A1B2C3" and p.panel == {"assignmentId": "3XYZ", "hitId": "H9"}


def test_study_panel_param(study: Study) -> None:
    study.panel_param = "rid"
    study.save()
    w = start(Client(), study, "?rid=panel-778&PROLIFIC_PID=ignored")
    assert w.participant.recruitment_id == "panel-778"  # the study's own parameter wins
    assert start(Client(), study, "?rid=panel-778").url == w.url


def test_without_panel_id_each_start_is_new(study: Study) -> None:
    assert start(Client(), study).url != start(Client(), study).url
    assert Participant.objects.count() == 2


@pytest.mark.parametrize(
    "query, name",
    [
        ("?PROLIFIC_PID=ok&STUDY_ID=%3Cscript%3E", "STUDY_ID"),
        ("?PROLIFIC_PID=ok&SESSION_ID=" + "x" * 101, "SESSION_ID"),
        ("?workerId=bad%20id", "workerId"),
        ("?workerId=ok&hitId=a/b", "hitId"),
    ],
)
def test_bad_panel_parameters(client: Client, study: Study, query: str, name: str) -> None:
    r = client.get(f"/s/{study.slug}/{query}")
    assert r.status_code == 400 and f"The {name} in this link is not valid" in r.content.decode()
    assert Participant.objects.count() == 0


def test_tampered_start_form_is_checked_again(client: Client, study: Study) -> None:
    r = client.post(f"/s/{study.slug}/", {"PROLIFIC_PID": "<b>x</b>"})
    assert r.status_code == 400 and "PROLIFIC_PID in this link is not valid" in r.content.decode()
    assert Participant.objects.count() == 0


def test_start_on_a_closed_study(client: Client, study: Study) -> None:
    client.get(f"/s/{study.slug}/")
    study_services.study_set_state(study=study, state=Study.State.CLOSED)
    r = client.post(f"/s/{study.slug}/")
    assert r.status_code == 404 and "not open" in r.content.decode()
    assert Participant.objects.count() == 0


def test_double_start_in_one_transaction_resumes(study: Study) -> None:
    first_page = flow.first_state(study)
    first = flow_services.participant_start(study=study, state=first_page, recruitment_id="dup-1")
    again = flow_services.participant_start(study=study, state=first_page, recruitment_id="dup-1")
    assert again.pk == first.pk and Participant.objects.count() == 1


# --- per-outcome codes and return links -------------------------------------------------
CODES = {
    "completed": "C0MPL",
    "screened_out": "SCR0UT",
    "quota_full": "QF111",
    "failed_attention": "ATTN00",
    "withdrew": "WDRW99",
}


@pytest.fixture
def panel_study(study: Study) -> Study:
    study.outcome_codes = {
        o: {"code": c, "redirect_url": "https://app.prolific.com/submissions/complete?cc={code}"}
        for o, c in CODES.items()
    }
    study.outcome_codes["withdrew"]["redirect_url"] = "https://panel.example/return"  # no {code}
    study.attention_checks = [
        {"key": "ac1", "prompt": "Choose 'Blue'.", "options": ["Red", "Blue"], "answer": 2,
         "page": "profile"}
    ]  # fmt: skip
    study.save()
    return study


def _end_page(w: Walker, outcome: str, code_id: str) -> str:
    p = w.participant
    assert p.completion_code == CODES[outcome]
    body = w.get().content.decode()
    assert re.search(rf'id="{code_id}">{CODES[outcome]}<', body), body
    return body


def _assert_prolific_return(body: str, code: str) -> None:
    url = f"https://app.prolific.com/submissions/complete?cc={code}"
    assert f'href="{url}"' in body
    assert f'http-equiv="refresh" content="5;url={url}"' in body


def test_completed(panel_study: Study, eager: None) -> None:
    w = start(Client(), panel_study, PROLIFIC)
    w.to_profile()
    w.submit_profile({**PROFILE, "attention__ac1": "2"})
    for _ in range(5):
        w.get()
        w.post(w.evaluation_data())
    assert w.participant.state == S.COMPLETED
    _assert_prolific_return(_end_page(w, "completed", "completion-code"), "C0MPL")


def test_screened_out(panel_study: Study) -> None:
    w = start(Client(), panel_study)
    w.screening({**ELIGIBLE, "occupation": "9"})
    _assert_prolific_return(_end_page(w, "screened_out", "screenout-code"), "SCR0UT")


def test_quota_full(panel_study: Study) -> None:
    Quota.objects.create(study=panel_study, limit=0)
    w = start(Client(), panel_study)
    assert w.participant.state == S.QUOTA_FULL
    _assert_prolific_return(_end_page(w, "quota_full", "quota-full-code"), "QF111")


def test_failed_attention(panel_study: Study) -> None:
    w = start(Client(), panel_study)
    w.to_profile()
    w.submit_profile({**PROFILE, "attention__ac1": "1"})
    _assert_prolific_return(_end_page(w, "failed_attention", "failed-attention-code"), "ATTN00")


def test_withdrew_return_link_without_placeholder(panel_study: Study) -> None:
    w = start(Client(), panel_study)
    w.client.post(w.url + "withdraw")
    body = _end_page(w, "withdrew", "withdrew-code")
    assert 'href="https://panel.example/return"' in body


def test_no_recourse_is_credited_with_the_completed_code(panel_study: Study, eager: None) -> None:
    from recourse_engine import synth_pool
    from tests.studyapp.conftest import SCHEMA

    pool = synth_pool(SCHEMA, n=200, seed=3)
    pool["income"] = 1_000_000
    panel_study.pool_csv = pool.to_csv(index=False)
    panel_study.pool_hash = "poor"
    panel_study.save()
    w = start(Client(), panel_study)
    w.to_profile()
    w.submit_profile({**PROFILE, "attention__ac1": "2"})
    assert w.participant.state == S.NO_RECOURSE
    _assert_prolific_return(_end_page(w, "completed", "no-recourse-code"), "C0MPL")


@pytest.mark.parametrize("url", ["javascript:alert(1)", "ftp://x.example/", "not a url"])
def test_unsafe_return_links_are_not_shown(study: Study, url: str) -> None:
    study.outcome_codes["screened_out"]["redirect_url"] = url
    study.save()
    w = start(Client(), study)
    w.screening({**ELIGIBLE, "occupation": "9"})
    body = w.get().content.decode()
    assert study.outcome_codes["screened_out"]["code"] in body
    assert "return-link" not in body and "http-equiv" not in body


def test_no_return_link_when_none_is_set(study: Study) -> None:
    w = start(Client(), study)
    w.screening({**ELIGIBLE, "occupation": "9"})
    body = w.get().content.decode()
    assert 'id="screenout-code"' in body and "return-link" not in body
