"""The load generator against a live server, and the verifier catching every kind of
difference between what the bots sent and what the database holds."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.utils import timezone

from studyapp.models import Evaluation, Participant, Study
from studyapp.participation.flow import first_state
from studyapp.participation.services import participant_start
from studyapp.simulation.load import TIME_LIMIT_PASSED, run_load
from studyapp.simulation.load_verify import verify_load
from studyapp.simulation.think_time import parse_think


@pytest.fixture
def walked(live_server: Any, study: Study, eager: None) -> tuple[Any, Any]:
    since = timezone.now()
    # one at a time: the test database is an in-memory SQLite shared with the server thread
    report = run_load(study, live_server.url, n=3, concurrency=1, think=(0.0, 0.0), seed=4)
    return report, since


def test_load_run_walks_every_participant_and_the_database_agrees(
    walked: tuple[Any, Any], study: Study
) -> None:
    report, since = walked
    assert not report.errors and not report.failed
    assert len({r.code for r in report.results}) == 3
    # one timed submit per plan page a bot answered, counted independently of the samples
    submits = sum(1 for s in report.samples if s.label == "evaluation submit")
    assert submits == sum(r.evaluations for r in report.results) == Evaluation.objects.count()
    assert set(report.latency_table()) >= {"welcome", "start", "consent", "profile submit", "all"}
    v = verify_load(study, report.results, since=since, require_complete=False)
    assert v.ok, v.problems
    assert v.evaluations_matching == v.evaluations_sent == Evaluation.objects.count()


def test_verifier_reports_a_changed_a_lost_rating_and_an_extra_participant(
    walked: tuple[Any, Any], study: Study
) -> None:
    report, since = walked
    first, second = Evaluation.objects.order_by("pk")[:2]
    Evaluation.objects.filter(pk=first.pk).update(acceptance=first.acceptance % 7 + 1)
    Evaluation.objects.filter(pk=second.pk).delete()
    participant_start(study=study, state=first_state(study))
    problems = verify_load(study, report.results, since=since, require_complete=False).problems
    text = "\n".join(problems)
    assert "stored differently: ['acceptance']" in text
    assert "sent but not stored" in text
    assert "4 participants joined during the run, the bots were 3" in text


def test_verifier_requires_completion_by_default(walked: tuple[Any, Any], study: Study) -> None:
    report, since = walked
    code = report.results[0].code
    Participant.objects.filter(code=code).update(state=Participant.State.EVALUATING)
    v = verify_load(study, report.results, since=since)
    assert not v.ok and any(code in p and "evaluating" in p for p in v.problems)


def test_a_participant_cut_by_the_runs_end_is_checked_up_to_the_page_not_sent(
    walked: tuple[Any, Any], study: Study
) -> None:
    """The run's end stops a participant after they filled in a plan's rating and before
    it went out: that rating is not missing, everything they sent before it is checked."""
    report, since = walked
    r = next(r for r in report.results if r.evaluations >= 2)
    keys = [k for k in r.sent if k.startswith("evaluation-")]
    r.sent = {k: r.sent[k] for k in list(r.sent)[: list(r.sent).index(keys[-1]) + 1]}
    Evaluation.objects.filter(recourse_id=int(r.sent[keys[-1]]["recourse"])).delete()
    Participant.objects.filter(code=r.code).update(state=Participant.State.EVALUATING)
    r.error = TIME_LIMIT_PASSED
    assert verify_load(study, report.results, since=since, require_complete=False).ok
    r.error = "a server error"  # stopped by a problem, not by the run's end: all reported
    text = "\n".join(verify_load(study, report.results, since=since).problems)
    assert f"{r.code}: stopped in state" in text and "sent but not stored" in text
    r.error = TIME_LIMIT_PASSED  # an earlier rating changed is still found
    first = Evaluation.objects.get(recourse_id=int(r.sent[keys[0]]["recourse"]))
    Evaluation.objects.filter(pk=first.pk).update(action=first.action % 7 + 1)
    problems = verify_load(study, report.results, since=since, require_complete=False).problems
    assert any("stored differently: ['action']" in p for p in problems), problems


@pytest.mark.parametrize(
    ("text", "expected"), [("1,3", (1.0, 3.0)), ("0", (0.0, 0.0)), (" 0.5 , 2 ", (0.5, 2.0))]
)
def test_think_time_parses(text: str, expected: tuple[float, float]) -> None:
    assert parse_think(text) == expected


@pytest.mark.parametrize("text", ["3,1", "-1,2", "a,b", "1,2,3", "0,601", ""])
def test_think_time_refuses_bad_input(text: str) -> None:
    with pytest.raises(ValueError, match="think time"):
        parse_think(text)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--concurrency", "2"], "need --url"),
        (["--url", "http://127.0.0.1:9", "--concurrency", "5"], "--concurrency must be 1..--n (3)"),
        (["--url", "http://127.0.0.1:9", "--think", "2,1"], "--think: think time needs"),
        (["--url", "http://127.0.0.1:9", "--verify", "--ramp", "-1"], "--ramp must be 0..600"),
        (["--url", "http://127.0.0.1:9", "--verify", "--time-limit", "0"], "--time-limit must"),
        (["--retry-errors", "2"], "--retry-errors need --url"),
        (["--url", "http://127.0.0.1:9", "--retry-errors", "101"], "--retry-errors must be 0..100"),
    ],
)
def test_load_options_are_checked_before_anything_runs(
    study: Study, args: list[str], message: str
) -> None:
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match=re.escape(message)):
        call_command("simulate_participants", study.slug, "--n", "3", *args)
    assert not Participant.objects.exists()
