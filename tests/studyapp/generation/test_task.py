"""The recourse task's failure paths: transient database errors are retried, a study that
cannot be used ends the wait politely and flags the case."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import OperationalError
from django.test import Client

from studyapp.config.celery_app import app as celery_app
from studyapp.generation import worker_cache
from studyapp.generation.tasks import generate_recourses
from studyapp.models import Participant, Study
from tests.studyapp.conftest import start

S = Participant.State


@pytest.fixture
def waiting(study: Study) -> Participant:
    """A participant whose profile is stored and whose task sits unconsumed in the broker."""
    w = start(Client(), study)
    w.to_profile()
    w.submit_profile()
    p = w.participant
    assert p.state == S.WAITING and p.generation == "queued"
    return p


@pytest.fixture(autouse=True)
def _eager_retries() -> Iterator[None]:
    """Eager retries re-apply the task; with propagation on, the Retry signal would escape."""
    old = celery_app.conf.task_eager_propagates
    celery_app.conf.task_eager_propagates = False
    yield
    celery_app.conf.task_eager_propagates = old


def _flaky(monkeypatch: Any, failures: int) -> list[int]:
    calls: list[int] = []
    real = worker_cache.pool_index_for

    def pool_index_for(study: Study) -> Any:
        calls.append(1)
        if len(calls) <= failures:
            raise OperationalError("database is locked")
        return real(study)

    monkeypatch.setattr(worker_cache, "pool_index_for", pool_index_for)
    monkeypatch.setattr(generate_recourses, "retry_backoff", False)
    return calls


def test_transient_database_error_is_retried(waiting: Participant, monkeypatch: Any) -> None:
    calls = _flaky(monkeypatch, failures=2)
    generate_recourses.apply(args=[waiting.pk])
    waiting.refresh_from_db()
    assert len(calls) == 3
    assert waiting.state == S.EVALUATING and waiting.recourses.count() == 5
    assert waiting.generation_attempts == 3


def test_persistent_database_error_gives_up_politely(
    waiting: Participant, monkeypatch: Any
) -> None:
    calls = _flaky(monkeypatch, failures=100)
    generate_recourses.apply(args=[waiting.pk])
    waiting.refresh_from_db()
    assert len(calls) == generate_recourses.max_retries + 1
    assert waiting.state == S.NO_RECOURSE and waiting.generation == "failed"
    assert waiting.flagged and "database unavailable" in waiting.generation_error
    assert waiting.completion_code and waiting.recourses.count() == 0


def test_unusable_study_pool_fails_the_task_not_the_participant(waiting: Participant) -> None:
    Study.objects.filter(pk=waiting.study_id).update(
        pool_csv="id,income\nA,1\n", pool_hash="broken"
    )
    generate_recourses.apply(args=[waiting.pk])
    waiting.refresh_from_db()
    assert waiting.state == S.NO_RECOURSE and waiting.generation == "failed"
    assert "study configuration" in waiting.generation_error and "missing column" in (
        waiting.generation_error
    )
    body = Client().get(f"/p/{waiting.code}/").content.decode()
    assert "could not find an action plan" in body
