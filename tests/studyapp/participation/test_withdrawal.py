"""Withdrawal by the participant (answers erased, bare row and log kept, idempotent) and
deletion on a researcher's request (row gone, log kept)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from studyapp.generation import services as generation_services
from studyapp.models import Evaluation, PageVisit, Participant, Profile, Recourse, Withdrawal
from studyapp.participation import withdrawal
from tests.studyapp.conftest import Walker, start

S = Participant.State


def _evaluating(study: Any, evaluations: int = 1) -> Walker:
    w = start(Client(), study, "?PROLIFIC_PID=wd-1&STUDY_ID=s1&SESSION_ID=x1")
    w.to_profile()
    w.submit_profile()
    for _ in range(evaluations):
        w.get()
        assert w.post(w.evaluation_data()).status_code == 302
    return w


def _assert_erased(p: Participant) -> None:
    p.refresh_from_db()
    assert p.state == S.WITHDRAWN
    assert p.completion_code == p.study.outcome_codes["withdrew"]["code"]
    assert p.finished_at is not None
    assert (p.screening, p.age, p.gender, p.income_band, p.income_jpy) == ({}, None, "", "", None)
    assert (p.attention, p.attention_failures, p.panel) == ({}, 0, {})
    for model in (Recourse, Evaluation, PageVisit, Profile):
        assert not model.objects.filter(participant=p).exists(), model.__name__


def test_withdraw_at_screening(study: Any) -> None:
    w = start(Client(), study)
    w.get()
    p = w.participant
    log = withdrawal.participant_withdraw(participant=p, page="screening")
    _assert_erased(p)
    assert (log.by, log.page, log.participant_number, log.study_id) == (
        "participant",
        "screening",
        p.pk,
        study.pk,
    )


def test_withdraw_while_evaluating_erases_everything(study: Any, eager: None) -> None:
    w = _evaluating(study, evaluations=1)
    p = w.participant
    assert p.panel == {"STUDY_ID": "s1", "SESSION_ID": "x1"} and p.gender
    assert Evaluation.objects.filter(participant=p).count() == 1
    other = _evaluating_other(study)
    log = withdrawal.participant_withdraw(participant=p)
    assert log.page == "evaluation-2"  # the page they were on when none is given
    _assert_erased(p)
    assert p.recruitment_id == "wd-1"  # kept: the same panel id resumes the withdrawn row
    # another participant's data is untouched
    assert Recourse.objects.filter(participant=other).count() == 5
    assert Profile.objects.filter(participant=other).exists()


def _evaluating_other(study: Any) -> Participant:
    o = start(Client(), study)
    o.to_profile()
    o.submit_profile()
    return o.participant


def test_withdraw_twice_is_idempotent(study: Any, eager: None) -> None:
    w = _evaluating(study, evaluations=0)
    p = w.participant
    first = withdrawal.participant_withdraw(participant=p, page="evaluation-1")
    second = withdrawal.participant_withdraw(participant=p, page="withdrawn")
    assert second.pk == first.pk and Withdrawal.objects.count() == 1
    _assert_erased(p)


def test_withdraw_while_recourses_are_queued(study: Any) -> None:
    """Not eager: the task runs after the withdrawal and must not bring data back."""
    w = start(Client(), study)
    w.to_profile()
    w.submit_profile()
    p = w.participant
    assert p.state == S.WAITING
    withdrawal.participant_withdraw(participant=p, page="waiting")
    generation_services.recourses_generate(participant_id=p.pk)
    _assert_erased(p)


def test_researcher_deletes_a_participant(study: Any, eager: None) -> None:
    w = _evaluating(study, evaluations=2)
    p = w.participant
    user = get_user_model().objects.create_user("researcher", password="x")
    log = withdrawal.participant_delete(participant=p, by_user=user)
    assert not Participant.objects.filter(pk=p.pk).exists()
    for model in (Recourse, Evaluation, PageVisit, Profile):
        assert not model.objects.filter(participant_id=p.pk).exists(), model.__name__
    log.refresh_from_db()
    assert (log.by, log.by_user, log.participant_number, log.page) == (
        "researcher",
        user,
        p.pk,
        "evaluation-3",
    )
    # the participant's link is dead now
    assert w.get().status_code == 404


def test_researcher_deletes_a_withdrawn_participant(study: Any) -> None:
    p = start(Client(), study).participant
    withdrawal.participant_withdraw(participant=p, page="screening")
    withdrawal.participant_delete(participant=p, by_user=None)
    assert not Participant.objects.filter(pk=p.pk).exists()
    assert list(Withdrawal.objects.order_by("at").values_list("by", flat=True)) == [
        "participant",
        "researcher",
    ]


def test_deleted_participant_task_is_a_no_op(study: Any) -> None:
    w = start(Client(), study)
    w.to_profile()
    w.submit_profile()
    pid = w.participant.pk
    withdrawal.participant_delete(participant=w.participant, by_user=None)
    assert generation_services.recourses_generate(participant_id=pid) == ""
    assert not Recourse.objects.filter(participant_id=pid).exists()


@pytest.mark.parametrize("page", ["screening", "consent", "scenario", "profile"])
def test_withdraw_through_the_pages(study: Any, page: str) -> None:
    """The withdraw link on a page: GET confirms (changes nothing), POST withdraws."""
    w = start(Client(), study)
    steps = ["consent", "screening", "scenario", "profile"]  # consent first
    answers = {
        "screening": None,
        "consent": {"page": "consent", "agree": "on"},
        "scenario": {"page": "scenario"},
    }
    for step in steps[: steps.index(page)]:
        if step == "screening":
            w.screening()
        else:
            w.get()
            w.post(answers[step])
    body = w.get().content.decode()
    withdraw_url = w.url + "withdraw"
    assert f'href="{withdraw_url}"' in body
    confirm = w.client.get(withdraw_url)
    assert confirm.status_code == 200 and 'method="post"' in confirm.content.decode()
    assert w.participant.state == page and not Withdrawal.objects.exists()
    r = w.client.post(withdraw_url)
    assert r.status_code == 302 and r["Location"] == w.url
    p = w.participant
    _assert_erased(p)
    assert Withdrawal.objects.get().page == page
    end = w.get().content.decode()
    assert study.outcome_codes["withdrew"]["code"] in end and 'id="withdrew-code"' in end
    assert w.client.post(withdraw_url).status_code == 302  # a second click: same end page
    assert Withdrawal.objects.count() == 1
    # a stale form of the page they left changes nothing
    w.post({"page": page})
    assert w.participant.state == S.WITHDRAWN


def test_withdraw_link_on_unknown_code(client: Client, study: Any) -> None:
    assert client.get("/p/not-a-code/withdraw").status_code == 404
    assert client.post("/p/not-a-code/withdraw").status_code == 404
    assert not Withdrawal.objects.exists()
