"""Attention checks: stored checks read through the settings model, the extra question on its
page, the END and FLAG rules, and bots that answer them."""

from __future__ import annotations

import html
from typing import Any

import pytest
from django.test import Client

from studyapp.models import Evaluation, Participant, Profile, Recourse, Study
from studyapp.participation import attention
from studyapp.simulation.bots import Bot
from tests.studyapp.conftest import PROFILE, Walker, start

S = Participant.State
BLUE = {"key": "blue", "prompt": "To show you read this, choose 'Blue'.",
        "options": ["Red", "Blue", "Green"], "answer": 2, "page": "profile"}  # fmt: skip
DISAGREE = {"key": "disagree", "prompt": "Please choose 'Disagree' here.",
            "options": ["Agree", "Disagree"], "answer": 2, "page": "evaluation-2"}  # fmt: skip


def test_checks_are_read_through_the_settings_model(study: Study) -> None:
    study.attention_checks = [{**BLUE, "prompt": "  Choose Blue.  "}, DISAGREE]
    assert attention.checks_for_page(study, "profile") == [{**BLUE, "prompt": "Choose Blue."}]
    assert attention.checks_for_page(study, "evaluation-2") == [DISAGREE]
    assert attention.checks_for_page(study, "evaluation-1") == []


def test_checks_read_once_per_stored_list_yet_every_change_shows(study: Study) -> None:
    study.attention_checks = [BLUE]
    first = attention.checks_for_page(study, "profile")
    first[0]["prompt"] = "changed by a caller"  # a caller's copy, not the kept one
    assert attention.checks_for_page(study, "profile") == [BLUE]
    study.attention_checks = [{**BLUE, "prompt": "Now choose Blue."}]
    assert attention.checks_for_page(study, "profile")[0]["prompt"] == "Now choose Blue."
    study.attention_checks = [{**BLUE, "answer": "2"}]  # same text but a string: refused
    assert attention.checks_for_page(study, "profile") == []


@pytest.mark.parametrize(
    "bad",
    [
        {"not": "a list"},
        ["text"],
        [{**BLUE, "key": "Blue!"}],
        [BLUE, {**DISAGREE, "key": "blue"}],
        [{**BLUE, "colour": 1}],
        [{**BLUE, "prompt": " "}],
        [{**BLUE, "options": ["only"]}],
        [{**BLUE, "answer": 4}],
        [{**BLUE, "answer": "2"}],
        [{**BLUE, "answer": True}],
        [{**BLUE, "page": "consent"}],
        [{**BLUE, "page": "evaluation-0"}],
    ],
)
def test_a_stored_list_the_settings_refuse_shows_no_check(
    study: Study, bad: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A list stored before the settings model (or by hand) that it would refuse: the page
    shows no check instead of breaking, and the problem is logged by its path."""
    study.attention_checks = bad
    assert attention.checks_for_page(study, "profile") == []
    assert "attention checks not used: attention_checks" in caplog.text


def _study_with(
    study: Study, rule: str = "end", max_failures: int = 0, checks: Any = None
) -> Study:
    study.attention_checks = [BLUE, DISAGREE] if checks is None else checks
    study.attention_rule = rule
    study.attention_max_failures = max_failures
    study.save()
    return study


def _at_profile(study: Study) -> Walker:
    w = start(Client(), study)
    w.to_profile()
    return w


def _shown_escaped(text: str, body: str) -> bool:
    """The text is on the page, escaped (whichever entity the template engine writes for an
    apostrophe), and never raw."""
    return html.escape(text) in body.replace("&#39;", "&#x27;") and text not in body


def test_check_is_shown_on_its_page(study: Study, eager: None) -> None:
    w = _at_profile(_study_with(study))
    body = w.get().content.decode()
    assert _shown_escaped(BLUE["prompt"], body) and 'name="attention__blue"' in body
    assert w.submit_profile({**PROFILE, "attention__blue": "2"}).status_code == 302
    assert "attention__disagree" not in w.get().content.decode()  # evaluation-1: none
    w.post(w.evaluation_data())
    body = w.get().content.decode()
    assert _shown_escaped(DISAGREE["prompt"], body) and 'name="attention__disagree"' in body


def test_unanswered_check_is_refused_and_nothing_stored(study: Study) -> None:
    w = _at_profile(_study_with(study))
    r = w.submit_profile(PROFILE)
    assert r.status_code == 400 and "Please answer this question." in r.content.decode()
    r = w.submit_profile({**PROFILE, "attention__blue": "7"})
    assert r.status_code == 400 and "Please choose one of the listed options." in r.text
    p = w.participant
    assert p.state == S.PROFILE and not Profile.objects.filter(participant=p).exists()
    assert p.attention == {} and p.attention_failures == 0


def test_correct_answers_go_on(study: Study, eager: None) -> None:
    w = _at_profile(_study_with(study))
    w.submit_profile({**PROFILE, "attention__blue": "2"})
    w.get()
    w.post(w.evaluation_data())
    w.get()
    w.post(w.evaluation_data(attention__disagree="2"))
    p = w.participant
    assert p.state == S.EVALUATING and p.attention == {"blue": 2, "disagree": 2}
    assert p.attention_failures == 0 and not p.flagged


def test_end_rule_at_the_profile(study: Study, eager: None) -> None:
    w = _at_profile(_study_with(study))
    w.submit_profile({**PROFILE, "attention__blue": "1"})
    p = w.participant
    assert p.state == S.FAILED_ATTENTION and p.attention == {"blue": 1}
    assert p.attention_failures == 1 and p.finished_at is not None
    assert p.completion_code == study.outcome_codes["failed_attention"]["code"]
    assert Profile.objects.filter(participant=p).exists()  # their answers so far are kept
    assert not Recourse.objects.filter(participant=p).exists()  # no recourses were made
    body = w.get().content.decode()
    assert 'id="failed-attention-code"' in body and p.completion_code in body


def test_end_rule_at_an_evaluation_keeps_that_evaluation(study: Study, eager: None) -> None:
    w = _at_profile(_study_with(study))
    w.submit_profile({**PROFILE, "attention__blue": "2"})
    for answer in (None, "1"):
        w.get()
        extra = {} if answer is None else {"attention__disagree": answer}
        w.post(w.evaluation_data(**extra))
    p = w.participant
    assert p.state == S.FAILED_ATTENTION and p.attention == {"blue": 2, "disagree": 1}
    assert Evaluation.objects.filter(participant=p).count() == 2


def test_failures_allowed_before_the_rule(study: Study, eager: None) -> None:
    w = _at_profile(_study_with(study, max_failures=1))
    w.submit_profile({**PROFILE, "attention__blue": "3"})
    assert w.participant.state == S.WAITING or w.participant.state == S.EVALUATING
    w.get()
    w.post(w.evaluation_data())
    w.get()
    w.post(w.evaluation_data(attention__disagree="1"))
    p = w.participant
    assert p.state == S.FAILED_ATTENTION and p.attention_failures == 2


def test_flag_rule_lets_them_finish(study: Study, eager: None) -> None:
    w = _at_profile(_study_with(study, rule="flag"))
    w.submit_profile({**PROFILE, "attention__blue": "1"})
    p = w.participant
    assert p.state == S.EVALUATING and p.flagged
    assert "failed 1 attention check(s)" in p.flag_reason
    for i in range(5):
        w.get()
        extra = {"attention__disagree": "1"} if i == 1 else {}
        w.post(w.evaluation_data(**extra))
    p.refresh_from_db()
    assert p.state == S.COMPLETED and p.attention_failures == 2
    assert p.completion_code == study.outcome_codes["completed"]["code"]
    assert "failed 2 attention check(s)" in p.flag_reason
    assert "failed 1 attention" not in p.flag_reason  # one reason, kept up to date


def test_a_broken_check_list_shows_no_check(study: Study, eager: None) -> None:
    """A list the console should have refused must not break participants' pages."""
    w = _at_profile(_study_with(study, checks=[{"key": "x"}]))
    assert "attention__" not in w.get().content.decode()
    assert w.submit_profile().status_code == 302


@pytest.mark.parametrize("rate, outcome", [(0.0, "completed"), (1.0, "failed_attention")])
def test_bots_answer_checks(study: Study, eager: None, rate: float, outcome: str) -> None:
    _study_with(study)
    result = Bot(study, seed=3, attention_error_rate=rate).run()
    assert result.outcome == outcome
    p = Participant.objects.get(code=result.code)
    assert p.attention.get("blue") == (2 if rate == 0 else 3)
