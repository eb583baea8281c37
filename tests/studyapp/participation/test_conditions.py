"""Conditions (least-filled assignment counting completes and fresh in-progress) and quotas
(per condition, per screening answer, both) with the quota-full outcome."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from typing import Any

from django.test import Client
from django.utils import timezone

from studyapp.models import Condition, Participant, Quota, Study
from studyapp.participation import flow, services
from tests.studyapp.conftest import ELIGIBLE, start

S = Participant.State


def _conditions(study: Study, *names: str, designs: dict[str, str] | None = None) -> None:
    for i, name in enumerate(names):
        Condition.objects.create(
            study=study, name=name, position=i, design=(designs or {}).get(name, "")
        )


def _arrive(study: Study, n: int) -> list[Participant]:
    first = flow.first_state(study)
    return [services.participant_start(study=study, state=first) for _ in range(n)]


def test_without_conditions_assigns_blank(study: Study) -> None:
    assert {p.condition for p in _arrive(study, 3)} == {""}


def test_round_robin_by_least_filled_then_position(study: Study) -> None:
    _conditions(study, "sparse", "balanced", "random")
    arrivals = [p.condition for p in _arrive(study, 7)]
    assert arrivals == ["sparse", "balanced", "random"] * 2 + ["sparse"]


def test_completes_count_and_stale_sessions_do_not(study: Study) -> None:
    _conditions(study, "a", "b")
    a1, b1, a2, b2 = _arrive(study, 4)
    assert [a1.condition, b1.condition, a2.condition, b2.condition] == ["a", "b", "a", "b"]
    # b's two: one abandoned long ago (stops counting), one screened out (never counts)
    old = timezone.now() - timedelta(minutes=study.assignment_timeout_minutes + 1)
    Participant.objects.filter(pk=b1.pk).update(created_at=old)
    Participant.objects.filter(pk=b2.pk).update(state=S.SCREENED_OUT)
    assert [p.condition for p in _arrive(study, 2)] == ["b", "b"]
    # a completed participant keeps counting however old
    Participant.objects.filter(pk=a1.pk).update(state=S.COMPLETED, created_at=old)
    Participant.objects.filter(study=study, condition="b").update(state=S.SCREENED_OUT)
    # a: a1 (completed) + a2 (in progress) = 2; b: 0 -> two more go to b
    assert [p.condition for p in _arrive(study, 3)] == ["b", "b", "a"]


def test_condition_design_is_used_for_recourses(study: Study, eager: None) -> None:
    _conditions(study, "random5", "default", designs={"random5": "random:5"})
    first = start(Client(), study)
    second = start(Client(), study)
    assert (first.participant.condition, second.participant.condition) == ("random5", "default")
    for w in (first, second):
        w.to_profile()
        w.submit_profile()
    assert Counter(first.participant.recourses.values_list("strategy", flat=True)) == {"random": 5}
    assert Counter(second.participant.recourses.values_list("strategy", flat=True)) == {
        "sparsest": 1,
        "proximate": 1,
        "random": 3,
    }


def test_full_condition_quota_is_skipped_then_quota_full(study: Study) -> None:
    _conditions(study, "a", "b")
    a, b = Condition.objects.order_by("position")
    Quota.objects.create(study=study, condition=a, limit=1)
    assert [p.condition for p in _arrive(study, 3)] == ["a", "b", "b"]  # a is full
    Quota.objects.create(study=study, condition=b, limit=2)
    late = start(Client(), study)  # both full: ends at once, with the quota-full code
    p = late.participant
    assert (
        p.state == S.QUOTA_FULL and p.completion_code == study.outcome_codes["quota_full"]["code"]
    )
    body = late.get().content.decode()
    assert 'id="quota-full-code"' in body and p.completion_code in body
    assert "withdraw-link" not in body  # an end page


def test_quota_on_a_study_without_conditions(study: Study) -> None:
    Quota.objects.create(study=study, limit=2)
    states = [p.state for p in _arrive(study, 3)]
    assert states == [S.CONSENT, S.CONSENT, S.QUOTA_FULL]  # consent comes first


def _screened(study: Study, **answers: Any) -> Participant:
    w = start(Client(), study)
    w.screening({**ELIGIBLE, **answers})
    return w.participant


def test_screening_quota_by_code_and_by_label(study: Study) -> None:
    Quota.objects.create(study=study, screening_key="gender", screening_value="1", limit=1)
    Quota.objects.create(study=study, screening_key="gender", screening_value="Male", limit=2)
    first = _screened(study, gender="1")
    assert first.state == S.SCENARIO  # the participant themself does not count
    second = _screened(study, gender="1")
    assert second.state == S.QUOTA_FULL
    assert second.completion_code == study.outcome_codes["quota_full"]["code"]
    assert second.screening["gender"] == 1  # the answers are kept
    assert [_screened(study, gender="2").state for _ in range(3)] == [
        S.SCENARIO,
        S.SCENARIO,
        S.QUOTA_FULL,
    ]
    assert _screened(study, gender="3").state == S.SCENARIO  # no quota on this cell


def test_screening_quota_within_a_condition(study: Study) -> None:
    _conditions(study, "a", "b")
    a = Condition.objects.get(name="a")
    Quota.objects.create(
        study=study, condition=a, screening_key="gender", screening_value="1", limit=1
    )
    results = [(p.condition, p.state) for p in (_screened(study, gender="1") for _ in range(4))]
    assert results == [
        ("a", S.SCENARIO),
        ("b", S.SCENARIO),
        ("a", S.QUOTA_FULL),
        ("a", S.QUOTA_FULL),  # screened-out participants hold no place: a is least filled
    ]
    other = _screened(study, gender="2")  # the quota is a's women only
    assert (other.condition, other.state) == ("a", S.SCENARIO)
    Quota.objects.all().delete()
    assert _screened(study, gender="1").condition == "b"  # a 2, b 1


def test_screening_quota_counts_fresh_and_completed_only(study: Study) -> None:
    Quota.objects.create(study=study, screening_key="gender", screening_value="1", limit=1)
    first = _screened(study, gender="1")
    old = timezone.now() - timedelta(minutes=study.assignment_timeout_minutes + 5)
    Participant.objects.filter(pk=first.pk).update(created_at=old)  # abandoned
    assert _screened(study, gender="1").state == S.SCENARIO
    Participant.objects.filter(study=study).update(state=S.COMPLETED)
    assert _screened(study, gender="1").state == S.QUOTA_FULL


def test_screening_quota_on_a_multi_answer(study: Study) -> None:
    Quota.objects.create(study=study, screening_key="loans", screening_value="8", limit=1)
    assert _screened(study).state == S.SCENARIO
    assert _screened(study).state == S.QUOTA_FULL
