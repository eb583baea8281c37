"""`run_load(retry_errors=N)`: a bot meets a server error as a participant does (the error
page asks for a reload) and gets past it without storing anything twice; without it the
first error stops the bot. The server's failure is real: a participant service raises the
database error a dropped connection raises, before or after storing the answer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import OperationalError
from django.utils import timezone

from studyapp.models import Evaluation, Participant, Study
from studyapp.participation import services as flow_services
from studyapp.simulation import load
from studyapp.simulation.load import LoadReport, run_load
from studyapp.simulation.load_verify import verify_load

#: the friendly error page's words (templates/500.html), and Django's bare page's
FRIENDLY, BARE = "Your answers so far are saved", "Server Error (500)"


@pytest.fixture(autouse=True)
def _quick_reloads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(load, "RETRY_FIRST_S", 0.01)


def _failing(
    monkeypatch: pytest.MonkeyPatch, name: str, *, times: int, after_storing: bool = False
) -> list[int]:
    """Make `services.<name>` raise a lost-connection error on its first `times` calls:
    before it stores anything, or after it stored (the answer is kept, the answer page
    fails). Returns the list its calls are counted in."""
    real: Callable[..., Any] = getattr(flow_services, name)
    calls: list[int] = []

    def flaky(**kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) > times:
            return real(**kwargs)
        if after_storing:
            real(**kwargs)
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(flow_services, name, flaky)
    return calls


def _run(study: Study, url: str, retry_errors: int) -> tuple[LoadReport, Any]:
    since = timezone.now()
    # one at a time: the test database is an in-memory SQLite shared with the server thread
    report = run_load(
        study, url, n=2, concurrency=1, think=(0.0, 0.0), seed=3, retry_errors=retry_errors
    )
    return report, verify_load(study, report.results, since=since, require_complete=False)


def _submits(report: LoadReport, label: str) -> int:
    return sum(1 for s in report.samples if s.label == label)


@pytest.mark.parametrize("after_storing", [False, True])
def test_a_rating_that_met_a_server_error_is_stored_once(
    live_server: Any, study: Study, eager: None, monkeypatch: pytest.MonkeyPatch,
    after_storing: bool,
) -> None:  # fmt: skip
    calls = _failing(monkeypatch, "evaluation_submit", times=1, after_storing=after_storing)
    report, v = _run(study, live_server.url, retry_errors=3)
    assert len(calls) > 1  # the failure happened, and later submits went through
    assert not report.failed, [r.error for r in report.results]
    assert len(report.errors) == 1 and report.errors[0].status == 500
    assert report.retries == 1 and sum(r.retries for r in report.results) == 1
    # the error page the bot met is the friendly one
    assert len(report.error_pages) == 1
    assert FRIENDLY in report.error_pages[0] and BARE not in report.error_pages[0]
    # sent again only when the reloaded page still asked for it
    sent = sum(r.evaluations for r in report.results)
    assert _submits(report, "evaluation submit") == sent + (0 if after_storing else 1)
    assert v.ok, v.problems
    assert v.evaluations_matching == v.evaluations_sent == Evaluation.objects.count() == sent


def test_a_start_that_met_a_server_error_resumes_the_same_participant(
    live_server: Any, study: Study, eager: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _failing(monkeypatch, "participant_start", times=1, after_storing=True)
    report, v = _run(study, live_server.url, retry_errors=3)
    assert not report.failed and report.retries == 1
    assert _submits(report, "start") == 3  # pressed again after the error
    # the stored participant was resumed through the link's panel id: two bots, two rows
    assert Participant.objects.count() == 2
    assert all(p.recruitment_id.startswith("load-") for p in Participant.objects.all())
    assert v.ok, v.problems


def test_without_retries_the_first_server_error_stops_the_participant(
    live_server: Any, study: Study, eager: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _failing(monkeypatch, "evaluation_submit", times=1)
    report, _ = _run(study, live_server.url, retry_errors=0)
    assert len(report.errors) == 1 and report.retries == 0
    assert len(report.failed) == 1 and "HTTP 500" in report.failed[0].error
    # no panel id without retries (the benchmark's arrivals are unchanged)
    assert not Participant.objects.exclude(recruitment_id="").exists()


def test_reloads_are_bounded(
    live_server: Any, study: Study, eager: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _failing(monkeypatch, "profile_submit", times=10**6)  # the database never comes back
    report, _ = _run(study, live_server.url, retry_errors=2)
    assert [r.retries for r in report.results] == [2, 2]
    assert len(report.failed) == 2
    assert all("2 reloads did not help" in r.error for r in report.failed)
    assert _submits(report, "profile submit") == 2 * 3
    assert report.as_dict()["retries"] == 4 and report.as_dict()["retry_errors"] == 2


def test_retry_errors_is_checked(study: Study) -> None:
    with pytest.raises(ValueError, match="retry_errors must be 0..100"):
        run_load(study, "http://127.0.0.1:9", n=1, concurrency=1, retry_errors=101)
