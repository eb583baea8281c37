"""Lost recourse tasks: queueing never fails the participant, and the sweeper queues again
every participant whose task went quiet, exactly once per quiet spell."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.conf import settings
from django.test import Client
from django.utils import timezone

from recourse_study import serve
from studyapp.config.celery_app import app as celery_app
from studyapp.generation import services, sweeper
from studyapp.generation.tasks import generate_recourses, queue_generation, sweep_waiting
from studyapp.models import Participant, Study
from tests.studyapp.conftest import start

ROOT = Path(__file__).resolve().parents[3]
S, G = Participant.State, Participant.Generation


def _submitted(study: Study) -> Participant:
    w = start(Client(), study)
    w.to_profile()
    w.submit_profile()
    return w.participant


def _waiting(study: Study) -> Participant:
    p = _submitted(study)
    assert p.state == S.WAITING and p.generation == G.QUEUED
    return p


def _sent(monkeypatch: Any) -> list[int]:
    """Record what is sent to the broker (the broker itself is not under test here)."""
    sent: list[int] = []
    monkeypatch.setattr(generate_recourses, "delay", lambda pk: sent.append(pk))
    return sent


def test_only_quiet_waiting_participants_are_queued_again(study: Study, monkeypatch: Any) -> None:
    a, b, c = (_waiting(study) for _ in range(3))
    sent = _sent(monkeypatch)
    now = timezone.now()
    old = now - dt.timedelta(seconds=sweeper.sweep_after_s() + 5)
    Participant.objects.filter(pk=a.pk).update(generation_queued_at=old)  # lost in the queue
    Participant.objects.filter(pk=b.pk).update(  # died while running
        generation=G.RUNNING, generation_queued_at=old, generation_started_at=old
    )
    Participant.objects.filter(pk=c.pk).update(generation_queued_at=now)  # just queued
    assert sorted(sweeper.sweep(queue_generation, now)) == sorted([a.pk, b.pk]) == sorted(sent)
    # the sweep is a sign of life: the next sweep, soon after, leaves them alone
    assert sweeper.sweep(queue_generation, now + dt.timedelta(seconds=1)) == []
    # ... until they are quiet again
    later = now + dt.timedelta(seconds=sweeper.sweep_after_s() + 1)
    assert sorted(sweeper.sweep(queue_generation, later)) == sorted([a.pk, b.pk, c.pk])


def test_a_swept_participant_gets_recourses_once(study: Study, eager: None) -> None:
    p = _submitted(study)
    assert p.state == S.EVALUATING  # eager: generated at submit
    n = p.recourses.count()
    Participant.objects.filter(pk=p.pk).update(state=S.WAITING, generation=G.RUNNING,
                                               generation_queued_at=None)  # fmt: skip
    # a participant with recourses already is never given a second set
    generate_recourses.apply(args=[p.pk])
    assert p.recourses.count() == n


def test_finished_and_ended_participants_are_never_swept(study: Study, eager: None) -> None:
    p = _submitted(study)
    assert p.generation == G.DONE
    later = timezone.now() + dt.timedelta(hours=1)
    assert p.pk not in sweeper.stuck(later)


def test_queueing_with_the_broker_down_never_raises(study: Study, monkeypatch: Any) -> None:
    def down(pk: int) -> None:
        raise ConnectionError("Error 111 connecting to 127.0.0.1:6399. Connection refused.")

    monkeypatch.setattr(generate_recourses, "delay", down)
    w = start(Client(), study)
    w.to_profile()
    r = w.submit_profile()
    assert r.status_code == 302  # the participant goes on to the waiting page
    p = w.participant
    assert p.state == S.WAITING and p.profile.values  # the profile is kept
    assert queue_generation(p.pk) is False


def test_a_task_waiting_for_a_fit_shows_signs_of_life(study: Study, monkeypatch: Any) -> None:
    p = _waiting(study)
    before = timezone.now() - dt.timedelta(minutes=5)
    Participant.objects.filter(pk=p.pk).update(generation_queued_at=before)
    from studyapp.generation import worker_cache

    monkeypatch.setattr(worker_cache, "generators_for", lambda *a: ({}, ["wachter"]))
    with pytest.raises(services.FitPending):
        services.recourses_generate(participant_id=p.pk)
    p.refresh_from_db()
    assert p.generation_queued_at > before and p.pk not in sweeper.stuck()


def test_beat_runs_the_sweeper_wherever_a_worker_is_started() -> None:
    schedule = settings.CELERY_BEAT_SCHEDULE["sweep-waiting"]
    assert schedule["task"] == sweep_waiting.name
    assert schedule["task"] in celery_app.tasks
    assert schedule["schedule"] <= sweeper.sweep_after_s()
    # scripts/run serves with `recourse-study serve`, whose worker runs beat
    assert "recourse-study serve" in (ROOT / "scripts" / "run").read_text()
    assert re.search(r"celery -A studyapp worker --beat", " ".join(serve.WORKER))
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    assert "--beat" in compose["services"]["worker"]["command"]
