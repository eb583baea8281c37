"""Celery queues per kind of work, on real workers: a long task on the fits queue does not
delay participants' recourses on theirs (PostgreSQL + Redis, one worker per queue), while on
the embedded default's single worker, which consumes every queue, it does; and `/metrics`
on the running stack shows the web's and the workers' series after the bot run."""

from __future__ import annotations

import json
import os
import signal
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from studyapp.config import celery_queues
from tests import warm_python
from tests.integration.stack import (
    ROOT,
    VENV_BIN,
    embedded_env,
    manage,
    postgres_redis_env,
    prepare,
    running,
)
from tests.services import require_postgres, require_redis

pytestmark = [pytest.mark.integration, pytest.mark.slow]

#: how long the stand-in fit holds its worker
SLOW_S = 20.0
#: a generous bound on a participant's recourse latency beside it (normally well under 1 s)
RECOURSE_BOUND_S = 10.0
TOKEN = "queue-test-token-0123456789abcdef"
INCLUDE = ("--include", "tests.integration.slow_task")

TIMES = (
    "import json; from studyapp.models import Participant as P; print(json.dumps([["
    "p.generation, p.generation_queued_at.timestamp(), p.generation_finished_at.timestamp(),"
    " sorted(set(p.recourses.values_list('method', flat=True)))]"
    " for p in P.objects.exclude(generation_queued_at=None).exclude(generation_finished_at=None)]))"
)


def _send_slow(env: dict[str, str], queue: str, marks: Path) -> None:
    manage(env, "shell", "-v0", "-c",
           "from studyapp.config.celery_app import app; app.send_task('tests.integration.slow_fit',"
           f" args=[{str(marks)!r}, {SLOW_S}], queue={queue!r})")  # fmt: skip


def _wait_started(marks: Path, timeout: float = 60) -> float:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if marks.exists() and marks.read_text().startswith("start"):
            return float(marks.read_text().split()[1])
        time.sleep(0.2)
    raise AssertionError("the slow task never started")


def _marks(marks: Path) -> dict[str, float]:
    return {k: float(v) for k, v in (line.split() for line in marks.read_text().splitlines())}


def _bots(env: dict[str, str], url: str, n: int) -> list[list]:
    out = manage(env, "simulate_participants", "carloan", "--n", str(n), "--url", url,
                 "--timeout", "90")  # fmt: skip
    assert out.startswith(f"{n} participants in carloan:"), out
    return json.loads(manage(env, "shell", "-v0", "-c", TIMES).strip().splitlines()[-1])


def _scrape(url: str, token: str | None) -> tuple[int, str]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(f"{url}/metrics", headers=headers)) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, ""


def _series(text: str) -> dict[tuple[str, tuple], float]:
    from prometheus_client.parser import text_string_to_metric_families

    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for fam in text_string_to_metric_families(text)
        for s in fam.samples
    }


def test_a_long_fit_on_its_queue_does_not_delay_recourses(tmp_path: Path) -> None:
    pg, rd = require_postgres(), require_redis()
    with postgres_redis_env(tmp_path, pg, rd) as env:
        env["STUDYAPP_METRICS_TOKEN"] = TOKEN
        queues = celery_queues.queue_names(env["STUDYAPP_QUEUE"], {})
        prepare(env)
        marks = tmp_path / "slow.marks"
        fits_log = tmp_path / "fits-worker.log"
        worker = ("--pool=solo", "-Q", queues["recourse"])
        with running(env, tmp_path, worker_args=worker) as url, open(fits_log, "w") as flog:
            fits = warm_python.start(
                [str(VENV_BIN / "celery"), "-A", "studyapp", "worker", "--pool=solo", *INCLUDE,
                 "-Q", queues["fits"], "-n", "fits@%h", "--loglevel=INFO", "--without-gossip",
                 "--without-mingle"], ROOT, env, flog,
            )  # fmt: skip
            try:
                deadline = time.monotonic() + 90
                while " ready." not in fits_log.read_text():
                    assert fits.poll() is None and time.monotonic() < deadline, fits_log.read_text()
                    time.sleep(0.2)
                _send_slow(env, queues["fits"], marks)
                started = _wait_started(marks)
                rows = _bots(env, url, 3)
                still_running = "end" not in _marks(marks)
                anonymous, _ = _scrape(url, None)
                status, text = _scrape(url, TOKEN)
            finally:
                os.killpg(fits.pid, signal.SIGKILL)
                fits.wait()
    assert len(rows) == 3 and {g for g, *_ in rows} <= {"done", "empty"}
    latencies = [finished - queued for _, queued, finished, _ in rows]
    assert max(latencies) < RECOURSE_BOUND_S, latencies
    assert all(queued > started for _, queued, _, _ in rows)  # queued while the fit ran
    assert still_running, "the stand-in fit ended before the participants: no overlap shown"
    # /metrics on the running stack: refused anonymously; after the run it holds the web's
    # page latencies, the recourse worker's latencies by method, and the broker's queues
    assert anonymous == 401 and status == 200
    found = _series(text)
    per_method: dict[str, int] = {}
    for generation, _, _, methods in rows:
        for m in methods if generation == "done" else []:
            per_method[m] = per_method.get(m, 0) + 1
    assert per_method
    for method, n in per_method.items():
        assert found[("studyapp_recourse_seconds_count", (("method", method),))] == n
    page = [v for (name, labels), v in found.items()
            if name == "studyapp_request_seconds_count" and ("view", "participant") in labels]  # fmt: skip
    assert sum(page) > 0
    assert found[("studyapp_broker_up", ())] == 1
    for q in (queues["recourse"], queues["fits"]):
        assert found[("studyapp_queue_depth", (("queue", q),))] == 0
    assert (
        "studyapp_task_seconds_count",
        (("task", "studyapp.tasks.generate_recourses"),),
    ) in found


def test_one_worker_on_every_queue_makes_participants_wait(tmp_path: Path) -> None:
    """The embedded default's single worker (no -Q, as `recourse-study serve` starts it)
    runs every kind of work, and a long task then holds participants' recourses back: what
    the separate queues above are for."""
    env = embedded_env(tmp_path)
    queues = celery_queues.queue_names("", {})
    prepare(env)
    marks = tmp_path / "slow.marks"
    with running(env, tmp_path, worker_args=("--pool=solo", *INCLUDE)) as url:
        _send_slow(env, queues["fits"], marks)
        _wait_started(marks)
        rows = _bots(env, url, 1)
    ended = _marks(marks)["end"]
    assert [g for g, *_ in rows] == ["done"]
    assert rows[0][2] >= ended  # the recourses were made only after the long task ended
