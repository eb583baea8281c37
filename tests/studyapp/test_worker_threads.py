"""The Celery worker limits native threads per process (STUDYAPP_WORKER_THREADS, default 1):
run in a child process, so the test process keeps its own thread settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.integration.stack import ROOT

PROBE = """
import json, os
import numpy  # loads OpenBLAS before the signal, as a worker that imported the engine has
from threadpoolctl import threadpool_info
from studyapp.config.celery_app import _limit_native_threads
_limit_native_threads()
print(json.dumps({"env": os.environ["OMP_NUM_THREADS"],
                  "pools": sorted({p["num_threads"] for p in threadpool_info()})}))
"""


def _probe(value: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    env.pop("STUDYAPP_WORKER_THREADS", None)
    if value is not None:
        env["STUDYAPP_WORKER_THREADS"] = value
    env["DJANGO_SETTINGS_MODULE"] = "studyapp.config.settings"
    return subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


@pytest.mark.parametrize(("value", "threads"), [(None, 1), ("2", 2)])
def test_worker_processes_run_native_libraries_on_the_set_threads(value, threads):
    r = _probe(value)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["env"] == str(threads)
    assert out["pools"] == [threads]  # every loaded BLAS/OpenMP pool


@pytest.mark.parametrize("bad", ["0", "two", "-3"])
def test_a_bad_thread_count_is_refused_with_a_message(bad):
    r = _probe(bad)
    assert r.returncode != 0
    assert "STUDYAPP_WORKER_THREADS must be" in r.stderr
