"""docker-compose.yml: parsed with PyYAML (no Docker engine here) and checked for what the
deployment needs: the services, healthchecks, the database volume, the environment the
settings read, commands that point at files that exist, and several web nodes behind the
balancer with PgBouncer before the database (deploy/: their configuration files)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
#: the Celery worker services: one per kind of work (docs/operations.md)
WORKERS = ("worker", "worker-recourse", "worker-fits")
#: the modules that read the environment the app services set
SETTINGS_SOURCES = (
    ROOT / "studyapp" / "config" / "settings.py",
    ROOT / "studyapp" / "config" / "celery_queues.py",
    ROOT / "studyapp" / "metrics" / "__init__.py",
    ROOT / "studyapp" / "metrics" / "views.py",
)


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def _cmd(service: dict[str, Any]) -> str:
    cmd = service["command"]
    return " ".join(cmd) if isinstance(cmd, list) else str(cmd)


def test_services_and_healthchecks(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert {"db", "redis", "web", *WORKERS} <= set(services)
    for name in ("db", "redis", "web", *WORKERS):
        assert services[name]["healthcheck"]["test"], name
    assert services["db"]["image"].startswith("postgres:")
    assert services["redis"]["image"].startswith("redis:")
    assert "gunicorn studyapp.config.wsgi" in _cmd(services["web"])
    # processes and threads sized for the host, not a fixed count
    assert "-c python:studyapp.config.gunicorn" in _cmd(services["web"])
    assert "--workers" not in _cmd(services["web"])
    for name in WORKERS:
        assert re.search(r"celery -A studyapp worker", _cmd(services[name])), name


def test_database_volume(compose: dict[str, Any]) -> None:
    mounts = compose["services"]["db"]["volumes"]
    named = [m.split(":")[0] for m in mounts if m.endswith(":/var/lib/postgresql/data")]
    assert named and named[0] in compose["volumes"]


def test_app_environment_matches_settings(compose: dict[str, Any]) -> None:
    settings_src = "\n".join(p.read_text() for p in SETTINGS_SOURCES)
    for name in ("web", *WORKERS):
        env = compose["services"][name]["environment"]
        # the app reaches PostgreSQL through PgBouncer, with the settings that needs
        assert env["DATABASE_URL"].startswith("postgres://")
        assert "@pgbouncer:6432/" in env["DATABASE_URL"] and env["STUDYAPP_PGBOUNCER"] == "1"
        assert env["CELERY_BROKER_URL"].startswith("redis://redis:6379")
        assert env["STUDYAPP_CACHE_URL"].startswith("redis://redis:6379")
        for var in env:
            assert f'"{var}"' in settings_src, f"{var} is not read by studyapp/config/settings.py"


def test_start_order(compose: dict[str, Any]) -> None:
    s = compose["services"]
    for dep in ("db", "redis"):
        assert s["setup"]["depends_on"][dep]["condition"] == "service_healthy"
    for name in ("web", *WORKERS):
        assert s[name]["depends_on"]["setup"]["condition"] == "service_completed_successfully"
    setup = _cmd(s["setup"])
    assert "migrate" in setup and "create_demo_study" in setup


def test_commands_point_at_existing_files(compose: dict[str, Any]) -> None:
    text = " ".join(_cmd(s) for s in compose["services"].values() if "command" in s)
    for path in re.findall(r"(?:scripts/\w+|manage\.py)", text):
        assert (ROOT / path).exists(), path
    # only the balancer publishes a port: the web service has replicas
    assert compose["services"]["lb"]["ports"] == ["8000:8000"]
    assert "ports" not in compose["services"]["web"]


def _compose_env(compose: dict[str, Any], service: str) -> dict[str, str]:
    """The service's environment as `docker compose up` resolves it with nothing set but a
    secret key: ${VAR:-default} takes its default, ${VAR:?message} the key given here."""
    given = {"DJANGO_SECRET_KEY": "k" * 20 + "-compose-test-" + "Z9y8X7w6V5u4T3s2R1q0" * 2}
    out: dict[str, str] = {}
    for name, value in compose["services"][service]["environment"].items():
        text = str(value)
        match = re.fullmatch(r"\$\{(\w+)(?::-(.*)|:\?.*)?\}", text)
        if match:
            text = given.get(match.group(1), match.group(2) or "")
        assert "${" not in text, f"{name}: unresolved {text}"
        out[name] = text
    return out


def _run_with(env: dict[str, str], tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """manage.py under exactly `env` (plus PATH), writable files in tmp_path instead of the
    container's /app/var."""
    clean = {"PATH": os.environ["PATH"], "DJANGO_SETTINGS_MODULE": "studyapp.config.settings"}
    clean.update(env, STUDYAPP_VAR_DIR=str(tmp_path))
    return subprocess.run(
        [sys.executable, *args], env=clean, cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_check_deploy_is_clean_under_the_compose_environment(
    compose: dict[str, Any], tmp_path: Path
) -> None:
    env = _compose_env(compose, "web")
    assert env["DJANGO_DEBUG"] == "0" and env["DJANGO_HTTPS"] == "1"
    result = _run_with(env, tmp_path, "manage.py", "check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout, result.stdout + result.stderr


HTTPS_PROBE = """
import django
django.setup()
from django.conf import settings
from django.test import Client
from django.test.utils import setup_test_environment
setup_test_environment()
plain = Client().get("/admin/login/")
proxied = Client(HTTP_X_FORWARDED_PROTO="https").get("/admin/login/")
print(plain.status_code, plain.get("Location", ""))
print(proxied.status_code, proxied.get("Strict-Transport-Security", ""))
print(" ".join(sorted(c for c, m in proxied.cookies.items() if m["secure"])))
"""


def test_compose_web_redirects_plain_http_and_trusts_its_proxy(
    compose: dict[str, Any], tmp_path: Path
) -> None:
    """Under the compose environment (SQLite instead of the db service): plain HTTP is sent
    to https, a request the proxy marks as https is served with HSTS and secure cookies."""
    env = {
        **_compose_env(compose, "web"),
        "DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite3",
        "STUDYAPP_PGBOUNCER": "0",  # SQLite stands in for PgBouncer and the db service
    }
    result = _run_with(env, tmp_path, "-c", HTTPS_PROBE)
    assert result.returncode == 0, result.stderr
    plain, proxied, secure_cookies = result.stdout.strip().splitlines()[-3:]
    assert plain.startswith("301 https://testserver/")
    assert proxied == "200 max-age=31536000; includeSubDomains"
    assert "csrftoken" in secure_cookies.split()


def test_embedded_default_stays_plain_http(tmp_path: Path) -> None:
    """scripts/run serves http://127.0.0.1:8000 with no environment: no redirect, no HSTS,
    cookies that work over HTTP."""
    code = (
        "import django; django.setup(); from django.conf import settings as s;"
        "print(s.SECURE_SSL_REDIRECT, s.SECURE_HSTS_SECONDS, s.SESSION_COOKIE_SECURE,"
        " s.CSRF_COOKIE_SECURE, getattr(s, 'SECURE_PROXY_SSL_HEADER', None))"
    )
    result = _run_with({}, tmp_path, "-c", code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "0", "False", "False", "None"]


QUEUES_PROBE = """
import json
import django
django.setup()
from django.conf import settings
from studyapp.config.celery_app import app
route = lambda task: app.amqp.router.route({}, task)["queue"].name
print(json.dumps({
    "all": [q.name for q in app.amqp.queues.values()],
    "recourse": route("studyapp.tasks.generate_recourses"),
    "fits": [route("studyapp.tasks.fit_balanced_methods"), route("studyapp.tasks.run_design_check")],
    "beat": sorted({route(e["task"]) for e in settings.CELERY_BEAT_SCHEDULE.values()}),
    "prefetch": app.conf.worker_prefetch_multiplier,
}))
"""


def _consumed(compose: dict[str, Any], service: str) -> set[str]:
    """The queues a worker service's -Q names, its ${VAR:-default}s resolved as compose
    resolves them when the shell sets nothing."""
    cmd = re.sub(r"\$\{(\w+):-([^}]*)\}", lambda m: m.group(2), _cmd(compose["services"][service]))
    match = re.search(r"-Q (\S+)", cmd)
    assert match, f"{service}: no -Q, so it would consume every queue"
    return set(match.group(1).split(","))


def test_worker_services_consume_the_settings_queues(
    compose: dict[str, Any], tmp_path: Path
) -> None:
    """Every queue the settings route to is consumed by a worker service; participants'
    recourses have a worker of their own; the one service with beat consumes the queues of
    the schedule's tasks."""
    import json

    env = {
        **_compose_env(compose, "worker"),
        "DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite3",
        "STUDYAPP_PGBOUNCER": "0",  # SQLite stands in for PgBouncer and the db service
    }
    result = _run_with(env, tmp_path, "-c", QUEUES_PROBE)
    assert result.returncode == 0, result.stderr
    q = json.loads(result.stdout.strip().splitlines()[-1])
    consumed = {name: _consumed(compose, name) for name in WORKERS}
    assert set().union(*consumed.values()) == set(q["all"])
    assert consumed["worker-recourse"] == {q["recourse"]}
    assert (
        set(q["fits"]) == consumed["worker-fits"] and q["recourse"] not in consumed["worker-fits"]
    )
    beat = [name for name in WORKERS if "--beat" in _cmd(compose["services"][name])]
    assert len(beat) == 1 and set(q["beat"]) <= consumed[beat[0]]
    assert q["prefetch"] == 1
    for name in WORKERS:  # each pool sized on its own
        assert re.search(r"--concurrency \$\{\w+:-\d+\}", _cmd(compose["services"][name])), name


# --- several web nodes behind the balancer, PgBouncer before PostgreSQL (issue 33) ----------
def _mounted(service: dict[str, Any], target: str) -> Path:
    """The repository file a service mounts at `target` (it must exist)."""
    for mount in service["volumes"]:
        source, dest = mount.split(":")[:2]
        if dest == target:
            path = ROOT / source.removeprefix("./")
            assert path.is_file(), path
            return path
    raise AssertionError(f"nothing mounted at {target}")


def test_web_scales_behind_the_balancer(compose: dict[str, Any]) -> None:
    s = compose["services"]
    replicas = re.fullmatch(r"\$\{STUDYAPP_WEB_NODES:-(\d+)\}", str(s["web"]["deploy"]["replicas"]))
    assert replicas and int(replicas.group(1)) >= 2
    assert s["lb"]["image"].startswith("haproxy:")
    assert s["lb"]["depends_on"]["web"]["condition"] == "service_healthy"
    cfg = _mounted(s["lb"], "/usr/local/etc/haproxy/haproxy.cfg").read_text()
    # every replica, found by Docker's DNS, checked on the cheap health URL the app answers
    assert re.search(r"server-template web \d+ web:8000", cfg)
    assert "resolvers docker" in cfg and "http-check send meth GET uri /healthz" in cfg
    assert "/healthz" in _cmd({"command": s["web"]["healthcheck"]["test"]})
    assert "studyapp.config.health.HealthMiddleware" in SETTINGS_SOURCES[0].read_text()


def test_the_balancers_error_pages_are_mounted_and_whole_http_answers(
    compose: dict[str, Any],
) -> None:
    """HAProxy's own 502/503/504 (no node could answer) are the participant's page, each a
    whole HTTP answer in a file HAProxy can hold (under its 16 kB buffer)."""
    lb = compose["services"]["lb"]
    cfg = _mounted(lb, "/usr/local/etc/haproxy/haproxy.cfg").read_text()
    folder = next(m.split(":")[0] for m in lb["volumes"] if ":/usr/local/etc/haproxy/errors" in m)
    for code in (502, 503, 504):
        assert f"errorfile {code} /usr/local/etc/haproxy/errors/{code}.http" in cfg
        raw = (ROOT / folder.removeprefix("./") / f"{code}.http").read_bytes()
        head, body = raw.split(b"\r\n\r\n", 1)
        lines = head.decode("ascii").split("\r\n")
        assert re.fullmatch(rf"HTTP/1\.[01] {code} [A-Za-z ]+", lines[0]), lines[0]
        assert f"Content-Length: {len(body)}" in lines and len(raw) < 16384
        assert "Your answers so far are saved" in body.decode("utf-8")


def test_pgbouncer_in_transaction_mode(compose: dict[str, Any]) -> None:
    s = compose["services"]
    ini = _mounted(s["pgbouncer"], "/etc/pgbouncer/compose.ini").read_text()
    users = _mounted(s["pgbouncer"], "/etc/pgbouncer/compose-users.txt").read_text()
    assert re.search(r"^pool_mode = transaction$", ini, re.M)
    assert re.search(r"^listen_port = 6432$", ini, re.M)
    assert re.search(r"^recourse = host=db port=5432 dbname=recourse$", ini, re.M)
    assert '"recourse" "recourse"' in users  # the db service's account
    assert s["pgbouncer"]["depends_on"]["db"]["condition"] == "service_healthy"
    for name in ("web", *WORKERS):
        assert s[name]["depends_on"]["pgbouncer"]["condition"] == "service_healthy", name
    # migrations go straight to the database
    assert "@db:5432/" in s["setup"]["environment"]["DATABASE_URL"]


PGBOUNCER_PROBE = """
import django
django.setup()
from django.conf import settings
db = settings.DATABASES["default"]
print(db["DISABLE_SERVER_SIDE_CURSORS"], db["OPTIONS"]["prepare_threshold"], db["CONN_MAX_AGE"],
      db["CONN_HEALTH_CHECKS"], settings.STUDYAPP_SHARED_CACHE,
      settings.CACHES["default"]["BACKEND"].rsplit(".", 1)[-1])
"""


def test_compose_environment_gives_the_pgbouncer_settings(
    compose: dict[str, Any], tmp_path: Path
) -> None:
    """Under the web service's environment: no server-side cursors and no prepared
    statements (neither survives transaction pooling), kept connections health-checked,
    and the shared Redis cache."""
    result = _run_with(_compose_env(compose, "web"), tmp_path, "-c", PGBOUNCER_PROBE)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-6:] == ["True", "None", "60", "True", "True", "RedisCache"]


def test_pgbouncer_needs_postgres(tmp_path: Path) -> None:
    """STUDYAPP_PGBOUNCER=1 with the SQLite default is refused, saying why."""
    result = _run_with({"STUDYAPP_PGBOUNCER": "1"}, tmp_path, "-c", PGBOUNCER_PROBE)
    assert result.returncode != 0 and "needs a postgres:// DATABASE_URL" in result.stderr
