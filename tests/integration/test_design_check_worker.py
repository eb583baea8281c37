"""The embedded stack (SQLite, its SQLite broker, a real Celery worker process): a design
check queued for a draft runs in the worker, which fits the draft's methods first; the
stored figures are those the command prints."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.integration.stack import embedded_env, manage, migrate, running

pytestmark = [pytest.mark.integration, pytest.mark.slow]

MAKE_DRAFT = (
    "from studyapp.studies import comparison, updates; "
    "s = comparison.comparison_study_create(slug='pilot', design='proximate:1', pool_size=500); "
    "updates.study_update(study=s, changes={'design': 'proximate:1,wachter:1,gs:1'})"
)
QUEUE = (
    "from studyapp.models import Study; from studyapp.studies import tasks; "
    "print(tasks.design_check_queue(study=Study.objects.get(slug='pilot'), sample_size=60).pk)"
)


def test_a_queued_design_check_runs_in_the_worker(tmp_path: Path) -> None:
    env = embedded_env(tmp_path)
    migrate(env)
    manage(env, "shell", "-v0", "-c", MAKE_DRAFT)
    with running(env, tmp_path):
        manage(env, "shell", "-v0", "-c", QUEUE)
        deadline = time.monotonic() + 300
        while True:
            summary = json.loads(manage(env, "check_design", "pilot", "--stored", "--json"))
            if summary["state"] in ("done", "failed") or time.monotonic() > deadline:
                break
            time.sleep(2)
    assert summary["state"] == "done", summary["message"]
    worker_log = (tmp_path / "worker.log").read_text()
    assert "run_design_check[" in worker_log and "succeeded" in worker_log
    (cond,) = summary["result"]["conditions"]
    methods = {p["label"]: p for p in cond["parts"] if p["method"]}
    assert set(methods) == {"wachter", "gs"}
    for part in methods.values():
        # fitted in the worker before the check: no "never fitted" fallbacks
        assert all("never fitted" not in r["reason"] for r in part["fallback_reasons"])
        assert part["own_plan"] + part["fallback"] == summary["result"]["sample"]["rejected"]
    assert summary["stale"] is False and summary["state"] == "done"
