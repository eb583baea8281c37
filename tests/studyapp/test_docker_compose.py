"""docker-compose.yml: parsed with PyYAML (no Docker engine here) and checked for what the
deployment needs: the four services, healthchecks, the database volume, the environment
the settings read, and commands that point at files that exist."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def _cmd(service: dict[str, Any]) -> str:
    cmd = service["command"]
    return " ".join(cmd) if isinstance(cmd, list) else str(cmd)


def test_services_and_healthchecks(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert {"db", "redis", "web", "worker"} <= set(services)
    for name in ("db", "redis", "web", "worker"):
        assert services[name]["healthcheck"]["test"], name
    assert services["db"]["image"].startswith("postgres:")
    assert services["redis"]["image"].startswith("redis:")
    assert "gunicorn studyapp.config.wsgi" in _cmd(services["web"])
    assert re.search(r"celery -A studyapp worker", _cmd(services["worker"]))


def test_database_volume(compose: dict[str, Any]) -> None:
    mounts = compose["services"]["db"]["volumes"]
    named = [m.split(":")[0] for m in mounts if m.endswith(":/var/lib/postgresql/data")]
    assert named and named[0] in compose["volumes"]


def test_app_environment_matches_settings(compose: dict[str, Any]) -> None:
    settings_src = (ROOT / "studyapp" / "config" / "settings.py").read_text()
    for name in ("web", "worker"):
        env = compose["services"][name]["environment"]
        assert env["DATABASE_URL"].startswith("postgres://") and "@db:5432/" in env["DATABASE_URL"]
        assert env["CELERY_BROKER_URL"].startswith("redis://redis:6379")
        for var in env:
            assert f'"{var}"' in settings_src, f"{var} is not read by studyapp/config/settings.py"


def test_start_order(compose: dict[str, Any]) -> None:
    s = compose["services"]
    for dep in ("db", "redis"):
        assert s["setup"]["depends_on"][dep]["condition"] == "service_healthy"
    for name in ("web", "worker"):
        assert s[name]["depends_on"]["setup"]["condition"] == "service_completed_successfully"
    setup = _cmd(s["setup"])
    assert "migrate" in setup and "create_demo_study" in setup


def test_commands_point_at_existing_files(compose: dict[str, Any]) -> None:
    text = " ".join(_cmd(s) for s in compose["services"].values() if "command" in s)
    for path in re.findall(r"(?:scripts/\w+|manage\.py)", text):
        assert (ROOT / path).exists(), path
    assert compose["services"]["web"]["ports"] == ["8000:8000"]
