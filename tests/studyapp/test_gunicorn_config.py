"""The host-sized gunicorn settings: one process per core plus one, threads in each, and the
overriding variables checked with a message naming the problem."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
READ = (
    "import os, studyapp.config.gunicorn as g; "
    "print(g.workers, g.threads, g.worker_class, len(os.sched_getaffinity(0)))"
)


def _read(**env: str) -> subprocess.CompletedProcess:
    clean = {
        k: v for k, v in os.environ.items() if k not in ("WEB_CONCURRENCY", "GUNICORN_THREADS")
    }
    return subprocess.run(
        [sys.executable, "-c", READ], env={**clean, **env}, cwd=ROOT, capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip


def test_defaults_follow_the_cores_this_process_may_use() -> None:
    r = _read()
    workers, threads, kind, cores = r.stdout.split()
    assert int(workers) == int(cores) + 1
    assert int(threads) == 4 and kind == "gthread"


def test_variables_override_and_one_thread_means_sync_workers() -> None:
    workers, threads, kind, _ = _read(WEB_CONCURRENCY="5", GUNICORN_THREADS="1").stdout.split()
    assert (workers, threads, kind) == ("5", "1", "sync")


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("WEB_CONCURRENCY", "many", "WEB_CONCURRENCY must be a whole number, got 'many'"),
        ("WEB_CONCURRENCY", "0", "WEB_CONCURRENCY must be 1..64, got 0"),
        ("GUNICORN_THREADS", "65", "GUNICORN_THREADS must be 1..64, got 65"),
    ],
)
def test_bad_values_are_refused_with_the_reason(name: str, value: str, message: str) -> None:
    r = _read(**{name: value})
    assert r.returncode != 0 and message in r.stderr


WSGI_PROBE = """
import gc, json
from django.db import connections
import studyapp.config.wsgi  # noqa: F401 - loads, warms up and freezes
from django.template import engines
from studyapp.participation.forms import PAGE_RENDERER
pages, fields = engines["jinja2"].env.cache, PAGE_RENDERER.engine.env.cache
print(json.dumps({
    "frozen": gc.get_freeze_count(),
    "cached": sorted(k[1] for k in pages.keys() if k[1].startswith("studyapp/")),
    "fields": sorted(k[1] for k in fields.keys()),
    "conn_max_age": connections["default"].settings_dict["CONN_MAX_AGE"],
}))
"""


def test_the_wsgi_app_loads_its_templates_then_freezes_them_out_of_the_collector(tmp_path):
    """Each web process loads every participant template before serving and moves what it
    loaded out of the garbage collector's walks; on the embedded default it keeps database
    connections between requests as on PostgreSQL."""
    import json

    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL",)}
    env.update(STUDYAPP_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="studyapp.config.settings")
    r = subprocess.run([sys.executable, "-c", WSGI_PROBE], env=env, cwd=ROOT,
                       capture_output=True, text=True, timeout=120)  # fmt: skip
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["frozen"] > 10_000  # the modules, URL patterns and templates
    folder = ROOT / "studyapp" / "jinja2" / "studyapp"
    assert len(out["cached"]) > 15  # every participant page (one end page for all endings)
    assert set(out["cached"]) >= {f"studyapp/{p.name}" for p in folder.glob("*.html")}
    assert "studyapp/_field.html" in out["fields"]
    assert out["conn_max_age"] > 0
