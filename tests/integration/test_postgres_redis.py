"""PostgreSQL + Redis + a real Celery worker process: participants complete the study over
HTTP (gunicorn), recourses are made by the worker, and the export holds the evaluations."""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import pytest

from tests.integration.stack import manage, postgres_redis_env, prepare, running, succeeded_tasks
from tests.services import require_postgres, require_redis

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_participants_complete_with_real_worker(tmp_path: Path) -> None:
    pg, rd = require_postgres(), require_redis()
    with postgres_redis_env(tmp_path, pg, rd) as env:
        assert env["DATABASE_URL"].startswith("postgres") and env["CELERY_BROKER_URL"].startswith(
            "redis"
        )
        prepare(env)
        with running(env, tmp_path) as url:
            out = manage(env, "simulate_participants", "carloan", "--n", "3", "--url", url,
                         "--timeout", "60")  # fmt: skip
            assert out.startswith("3 participants in carloan:"), out
            done_before = succeeded_tasks(tmp_path)
            count = "from studyapp.models import Recourse as R; print(R.objects.filter(participant_id=1).count())"
            recourses_before = int(manage(env, "shell", "-v0", "-c", count).split()[-1])
            # a re-delivered task for a participant who already has recourses changes nothing
            manage(env, "shell", "-v0", "-c",
                   "from studyapp.generation.tasks import generate_recourses; generate_recourses.delay(1)")  # fmt: skip
            deadline = time.monotonic() + 30
            while succeeded_tasks(tmp_path) == done_before and time.monotonic() < deadline:
                time.sleep(0.2)
            assert succeeded_tasks(tmp_path) == done_before + 1
            assert int(manage(env, "shell", "-v0", "-c", count).split()[-1]) == recourses_before > 0
        manage(env, "export_study", "carloan", "--out", str(tmp_path / "export"), "--with-test")
    ev = pd.read_csv(tmp_path / "export" / "evaluations.csv")
    pa = pd.read_csv(tmp_path / "export" / "participants.csv")
    assert done_before == 3  # every recourse set came from the worker process
    assert set(pa["generation"]) <= {"done", "empty"}
    completed = pa[pa["outcome"] == "completed"]
    assert len(completed) >= 1
    for _, p in completed.iterrows():
        rows = ev[ev["participant"] == p["participant"]]
        assert len(rows) == p["n_evaluations"]
        assert sorted(rows["position"]) == list(range(1, len(rows) + 1))
        assert rows["acceptance"].between(1, 7).all() and rows["action"].between(1, 7).all()
    full = completed[completed["n_evaluations"] == 5]
    assert len(full) >= 1, completed  # at least one participant with all five evaluations
    first = ev[ev["participant"] == full.iloc[0]["participant"]]
    assert sorted(first["strategy"]) == ["proximate", "random", "random", "random", "sparsest"]
