"""Twenty participants at once on the real stack (gunicorn with the host-sized settings and a
Celery worker), on the embedded default and on PostgreSQL + Redis: no request fails and the
database holds exactly what each participant sent (`simulate_participants --verify`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.stack import embedded_env, manage, postgres_redis_env, prepare, running
from tests.services import require_postgres, require_redis

pytestmark = [pytest.mark.integration, pytest.mark.slow]

N = 20
WEB_ARGS = ("-c", "python:studyapp.config.gunicorn")


def _walk(env: dict[str, str], work: Path, worker_args: tuple[str, ...]) -> dict:
    prepare(env)
    report = work / "load.json"
    with running(env, work, web_args=WEB_ARGS, worker_args=worker_args) as url:
        # manage() raises when the command exits non-zero: an error, a stopped participant
        # or a verification problem
        out = manage(env, "simulate_participants", "carloan", "--url", url, "--n", str(N),
                     "--concurrency", str(N), "--think", "0,0.3", "--verify", "--report",
                     str(report), "--timeout", "90", "--time-limit", "150", timeout=200)  # fmt: skip
    assert "verification OK" in out, out
    return json.loads(report.read_text())


def _check(figures: dict) -> None:
    assert figures["participants"] == N and figures["errors"] == 0
    assert figures["failed_participants"] == 0
    # a profile that no pool profile improves ends on the no-recourse page (stored as such)
    assert set(figures["outcomes"]) <= {"completed", "no_recourse"}
    assert figures["outcomes"]["completed"] >= N - 2
    assert figures["verification"] == {"ok": True, "problems": []}
    # every participant opened the welcome page and pressed start exactly once
    assert figures["latency_ms"]["welcome"]["n"] == figures["latency_ms"]["start"]["n"] == N


def test_concurrent_participants_embedded(tmp_path: Path) -> None:
    _check(_walk(embedded_env(tmp_path), tmp_path, ("--pool=solo",)))


def test_concurrent_participants_postgres_redis(tmp_path: Path) -> None:
    pg, rd = require_postgres(), require_redis()
    with postgres_redis_env(tmp_path, pg, rd) as env:
        _check(_walk(env, tmp_path, ("--concurrency", "2")))
