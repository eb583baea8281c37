"""Survey logic through the real pages (Django's client) and the bots: questions shown by
earlier answers and hidden otherwise (a hidden required question is not required, and an
answer to it is refused), a screener that ends the study, answers piped into later texts,
a questionnaire page with nothing to show passed by, and the export saying which questions
each participant was shown."""

from __future__ import annotations

import html
import io
import zipfile
from typing import Any

import pandas as pd
import pytest
from django.test import Client

from studyapp.export import export_zip_stream
from studyapp.models import PageVisit, Participant, Study
from studyapp.participation import services
from studyapp.simulation.bots import Bot
from studyapp.studies import updates
from tests.studyapp.conftest import ELIGIBLE, SCHEMA, Walker, make_study, start

S = Participant.State


def when(question: str, op: str = "equals", value: Any = 1) -> dict[str, Any]:
    return {"question": question, "op": op, "value": value}


QUESTIONS = [
    {"key": "student", "page": "pre", "type": "single", "text": {"en": "Are you a student?"},
     "options": {"en": ["Yes", "No"]}, "end_if": {"all": [when("q.student")]}},
    {"key": "car", "page": "pre", "type": "single", "text": {"en": "Do you have a car?"},
     "options": {"en": ["Own a car", "No car"]}},
    {"key": "years", "page": "pre", "type": "number", "min": 0, "max": 80,
     "text": {"en": "Years with a licence?"}, "show_if": {"all": [when("screening.age", "<", 30)]}},
    {"key": "trust", "page": "evaluation", "type": "likert", "points": 5,
     "text": {"en": "Trust this plan?"}, "show_if": {"all": [when("q.car")]}},
    {"key": "km", "page": "post", "type": "number", "min": 0, "max": 100000,
     "text": {"en": "You said '{q.car}', work as '{profile.position}' and are "
                    "{screening.age}: km a year?"},
     "show_if": {"all": [when("q.car")]}},
    {"key": "why", "page": "post", "type": "text", "text": {"en": "Why '{q.car}'?"},
     "show_if": {"all": [when("q.car", value=2), when("screening.age", "<", 30)]}},
]  # fmt: skip


def rules(p: Participant) -> list[str]:
    """The items this participant should have been shown, by the rules above written out
    in plain Python (not the module under test), in the flow's order."""
    young, car = int(p.screening["age"]) < 30, p.answers.get("car")
    shown = ["student", "car", *(["years"] if young else [])]
    if p.state == S.SCREENED_OUT:
        return shown
    return [
        *shown,
        *(["trust", "km"] if car == 1 else []),
        *(["why"] if car == 2 and young else []),
    ]


@pytest.fixture
def logic_study(transactional_db: Any, eager: None) -> Study:
    study = make_study(state="draft")
    texts = {**study.texts, "en": {**study.texts.get("en", {}),
                                   "completion": "Thank you. You told us: {q.car}."}}  # fmt: skip
    changes = {"questions": QUESTIONS, "texts": texts, "design": "sparsest:1,random:1"}
    updates.study_update(study=study, changes=changes)
    study.state = Study.State.LIVE
    study.save()
    return study


def _to_pre(study: Study, age: str, pid: str) -> Walker:
    w = start(Client(), study, f"?PROLIFIC_PID={pid}")
    assert w.consent().status_code == 302
    assert w.screening({**ELIGIBLE, "age": age}).status_code == 302
    assert w.page() == "questions_pre"
    return w


def _rate_plans(w: Walker, **items: str) -> None:
    while w.page().startswith("evaluation-"):
        assert w.post(w.evaluation_data(**items)).status_code == 302


def _export(study: Study) -> dict[str, pd.DataFrame]:
    stream = b"".join(export_zip_stream(study, with_test=True, with_text=True, with_panel_ids=True))
    with zipfile.ZipFile(io.BytesIO(stream)) as zf:
        return {
            name: pd.read_csv(zf.open(f"{name}.csv"), keep_default_na=False, dtype=str)
            for name in ("participants", "codebook")
        }


def test_display_logic_screener_and_piping_through_the_pages(logic_study: Study) -> None:
    driver = _to_pre(logic_study, "34", "driver")
    body = driver.get().content.decode()
    assert 'name="q__car"' in body and 'name="q__years"' not in body  # 34: not young
    with pytest.raises(services.RejectedSubmission, match="Unknown questions: years"):
        services.questionnaire_submit(
            participant=driver.participant,
            answers={"student": 2, "car": 1, "years": 3},
            order=["student", "car", "years"],
            then=S.SCENARIO,
        )
    assert driver.participant.answers == {}  # a hidden question's answer: refused
    # the hidden question is required, yet not asked: the page goes on without it, and an
    # answer posted for it is no field of the page's form
    r = driver.post({"page": "questions_pre", "q__student": "2", "q__car": "1", "q__years": "3"})
    assert r.status_code == 302 and driver.participant.answers == {"student": 2, "car": 1}
    driver.get()
    driver.post({"page": "scenario"})
    driver.submit_profile()
    assert 'name="q__trust"' in driver.get().content.decode()
    _rate_plans(driver, q__trust="4")
    post = html.unescape(driver.get().content.decode())
    position = SCHEMA.item("position").options[0]  # the profile's answer: every item "1"
    assert f"You said 'Own a car', work as '{position}' and are 34: km a year?" in post
    assert 'name="q__why"' not in post
    assert driver.post({"page": "questions_post", "q__km": "12000"}).status_code == 302
    p = driver.participant
    assert p.state == S.COMPLETED and p.answers == {"student": 2, "car": 1, "km": 12000}
    assert "Thank you. You told us: Own a car." in driver.get().content.decode()

    walker = _to_pre(logic_study, "25", "walker")
    body = walker.get().content.decode()
    assert 'name="q__years"' in body
    walker.post({"page": "questions_pre", "q__student": "2", "q__car": "2", "q__years": "4"})
    walker.get()
    walker.post({"page": "scenario"})
    walker.submit_profile()
    assert 'name="q__trust"' not in walker.get().content.decode()
    _rate_plans(walker)
    post = html.unescape(walker.get().content.decode())
    assert "Why 'No car'?" in post and 'name="q__km"' not in post
    walker.post({"page": "questions_post", "q__why": "I cycle."})
    assert walker.participant.state == S.COMPLETED

    student = _to_pre(logic_study, "22", "student")
    student.post({"page": "questions_pre", "q__student": "1", "q__car": "1", "q__years": "1"})
    p = student.participant
    assert p.state == S.SCREENED_OUT
    assert p.completion_code == logic_study.outcome_codes["screened_out"]["code"]
    assert 'id="screenout-code"' in student.get().content.decode()

    files = _export(logic_study)
    pa = files["participants"].set_index("recruitment_id", drop=False)
    assert pa.loc["driver", "questions_shown"] == "student;car;trust;km"
    assert pa.loc["walker", "questions_shown"] == "student;car;years;why"
    assert pa.loc["student", "questions_shown"] == "student;car;years"
    assert (pa.loc["driver", "q_years"], pa.loc["walker", "q_km"]) == ("", "")
    assert pa.loc["student", "outcome"] == "screened_out"
    cb = files["codebook"].set_index(["file", "column"])["description"]
    assert cb.loc[("participants.csv", "questions_shown")].startswith(
        "the study's own items shown to the participant"
    )
    assert cb.loc[("participants.csv", "q_km")].endswith(
        "shown only when q.car is 1 (Own a car) (empty when not shown)"
    )
    assert (
        "ends the study (screened_out) when q.student is 1 (Yes)"
        in cb.loc[("participants.csv", "q_student")]
    )


def test_bots_answer_only_what_they_are_shown_and_can_be_screened_out(
    logic_study: Study,
) -> None:
    results = [Bot(logic_study, seed=seed).run() for seed in range(4)]
    screened = Bot(logic_study, seed=9, end_at_screener=True).run()
    assert screened.outcome == "screened_out"
    assert {r.outcome for r in results} <= {"completed", "no_recourse"}
    files = _export(logic_study)
    pa = files["participants"].set_index("participant")
    assert len(pa) == 5
    for p in Participant.objects.filter(study=logic_study):
        assert p.is_test
        expected = rules(p)
        if p.state == S.NO_RECOURSE:  # no plan: the plan pages and what follows not reached
            expected = [k for k in expected if k in ("student", "car", "years")]
        assert pa.loc[str(p.pk), "questions_shown"].split(";") == expected, p.pk
        # every item here is required: each one shown was answered (trust with each plan)
        assert set(p.answers) == {k for k in expected if k != "trust"}, (p.pk, p.answers)
        for ev in p.evaluations.all():
            assert ev.item_order == (["trust"] if p.answers["car"] == 1 else [])
        shown_post = [k for k in expected if k in ("km", "why")]
        visited = PageVisit.objects.filter(participant=p, page="questions_post").exists()
        if p.state == S.COMPLETED:
            assert visited == bool(shown_post)  # nothing to show: the page passed by
            assert p.item_orders["post"] == shown_post
