"""Beat runs the delayed-release schedule beside the sweeper, from a schedule kept in the
database (django-celery-beat), wherever a worker is started."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from django.conf import settings
from django_celery_beat.models import PeriodicTask
from django_celery_beat.schedulers import DatabaseScheduler

from recourse_study import serve
from studyapp.config.celery_app import BEAT_SCHEDULER
from studyapp.config.celery_app import app as celery_app
from studyapp.participation.tasks import release_due

ROOT = Path(__file__).resolve().parents[3]


def test_the_database_scheduler_holds_the_sweeper_and_the_release(transactional_db: Any) -> None:
    assert settings.CELERY_BEAT_SCHEDULER == BEAT_SCHEDULER
    scheduler = DatabaseScheduler(app=celery_app, lazy=False)
    assert {"sweep-waiting", "release-due"} <= set(scheduler.schedule)
    rows = {t.name: t for t in PeriodicTask.objects.all()}
    assert rows["release-due"].task == release_due.name
    assert rows["sweep-waiting"].task == "studyapp.tasks.sweep_waiting"
    every = rows["release-due"].interval
    assert every.every * {"seconds": 1, "minutes": 60}[every.period] == int(
        settings.STUDYAPP_RELEASE_EVERY_S
    )
    assert release_due.name in celery_app.tasks


def test_scripts_and_compose_start_beat_with_the_database_scheduler() -> None:
    # scripts/run serves with `recourse-study serve`, whose worker runs beat
    assert "recourse-study serve" in (ROOT / "scripts" / "run").read_text()
    assert f"worker --beat --scheduler {BEAT_SCHEDULER}" in " ".join(serve.WORKER)
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    command = compose["services"]["worker"]["command"]
    assert "--beat" in command and f"--scheduler {BEAT_SCHEDULER}" in command


def test_the_task_runs_the_schedule(transactional_db: Any) -> None:
    done = {"released": 0, "reminded": 0, "expired": 0, "forgotten": 0}
    assert release_due.apply().get() == {**done, "waves_opened": 0, "waves_expired": 0}
