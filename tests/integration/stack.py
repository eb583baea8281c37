"""Start the real thing for a test or a benchmark: migrate, load the demo study, run a
Celery worker process and gunicorn against a given environment, and tear them down.

Two environments: the embedded default (SQLite + SQLite-backed broker in a temp folder)
and PostgreSQL + Redis (a throwaway database and a queue name of its own).
"""

from __future__ import annotations

import atexit
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from tests import warm_python

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def embedded_env(var_dir: Path) -> dict[str, str]:
    # the metrics' sample files go to the stack's own var folder (not the test process's)
    dropped = ("DATABASE_URL", "CELERY_BROKER_URL", "STUDYAPP_METRICS_DIR")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env.update(STUDYAPP_VAR_DIR=str(var_dir), DJANGO_SETTINGS_MODULE="studyapp.config.settings")
    return env


@contextmanager
def postgres_redis_env(var_dir: Path, pg_url: str, redis_url: str) -> Iterator[dict[str, str]]:
    """A throwaway database and queue; both are removed afterwards."""
    import psycopg
    import redis

    name = f"recourse_it_{uuid.uuid4().hex[:10]}"
    queue = f"studyapp-test-{uuid.uuid4().hex[:10]}"
    template = _migrated_template(pg_url, var_dir)
    with psycopg.connect(f"{pg_url}/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    _migrated_urls.add(f"{pg_url}/{name}")
    env = embedded_env(var_dir)
    env.update(
        DATABASE_URL=f"{pg_url}/{name}", CELERY_BROKER_URL=f"{redis_url}/0", STUDYAPP_QUEUE=queue
    )
    try:
        yield env
    finally:
        with psycopg.connect(f"{pg_url}/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        client = redis.Redis.from_url(f"{redis_url}/0")
        for key in client.scan_iter(f"*{queue}*"):
            client.delete(key)


#: per PostgreSQL server (its URL), a database this process migrated once: each throwaway
#: database is created from it (`CREATE DATABASE ... TEMPLATE`, a file copy), not migrated
_templates: dict[str, str] = {}
#: throwaway databases made from a template: already at the current migrations
_migrated_urls: set[str] = set()


def _migrated_template(pg_url: str, var_dir: Path) -> str:
    import psycopg

    if pg_url not in _templates:
        name = f"recourse_tpl_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(f"{pg_url}/postgres", autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        env = embedded_env(var_dir / "template")
        env["DATABASE_URL"] = f"{pg_url}/{name}"
        manage(env, "migrate", "--noinput", "-v0")
        _templates[pg_url] = name
        atexit.register(_drop_quietly, pg_url, name)
    return _templates[pg_url]


def _drop_quietly(pg_url: str, name: str) -> None:
    """Drop a template at exit; a server the test stopped (its own cluster) has none left."""
    import psycopg

    try:
        with psycopg.connect(f"{pg_url}/postgres", autocommit=True, connect_timeout=5) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    except psycopg.Error:
        pass


def manage(env: dict[str, str], *args: str, timeout: float = 300) -> str:
    """Run a management command; raise with its stderr if it fails. `create_demo_study` on a
    fresh embedded database is run once per set of arguments in this process, and copied."""
    if args[:1] == ("create_demo_study",):
        return _demo_study(env, args, timeout)
    return _manage(env, *args, timeout=timeout)


#: create_demo_study's arguments -> the database it left on a freshly migrated embedded one
#: (a copy), and what it printed
_demo_dbs: dict[tuple[str, ...], tuple[Path, str]] = {}


def _demo_study(env: dict[str, str], args: tuple[str, ...], timeout: float) -> str:
    """The demo study on a fresh embedded database: the same arguments give the same study
    (its pool and model come from fixed seeds), so the command's database is kept and copied
    for the next test that asks for it. Anything else (PostgreSQL, a database that holds
    more, a command that queued tasks in the broker file) runs the command itself."""
    import filecmp
    import shutil
    import tempfile

    var = Path(env["STUDYAPP_VAR_DIR"])
    target = var / "db.sqlite3"
    fresh = (
        "DATABASE_URL" not in env
        and bool(_migrated_sqlite)
        and target.exists()
        and not (var / "db.sqlite3-wal").exists()
        and filecmp.cmp(target, _migrated_sqlite[0], shallow=False)
    )
    if fresh and args in _demo_dbs:
        shutil.copyfile(_demo_dbs[args][0], target)
        return _demo_dbs[args][1]
    printed = _manage(env, *args, timeout=timeout)
    untouched_broker = not any(var.glob("celery-broker.sqlite*"))
    if fresh and untouched_broker and not (var / "db.sqlite3-wal").exists():
        kept = Path(tempfile.mkdtemp(prefix="recourse-demo-")) / "db.sqlite3"
        shutil.copyfile(target, kept)
        atexit.register(shutil.rmtree, kept.parent, ignore_errors=True)
        _demo_dbs[args] = (kept, printed)
    return printed


def _manage(env: dict[str, str], *args: str, timeout: float = 300) -> str:
    r = warm_python.python(["manage.py", *args], ROOT, env, timeout)
    if r.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed ({r.returncode}): {r.stderr}")
    return r.stdout


#: a database migrated once per test process, which `migrate` copies for the embedded default
_migrated_sqlite: list[Path] = []


def migrate(env: dict[str, str]) -> None:
    """Bring the database of `env` to the current migrations.

    A new SQLite database of the embedded default becomes a copy of one that this process
    migrated once (migrating an empty database gives the same file every time, and the
    command costs seconds a test), as a throwaway PostgreSQL database of `postgres_redis_env`
    is made from a migrated template; any other database is migrated in place."""
    import shutil
    import tempfile

    target = Path(env["STUDYAPP_VAR_DIR"]) / "db.sqlite3"
    if env.get("DATABASE_URL") in _migrated_urls:
        return  # made from a migrated template (`postgres_redis_env`)
    if "DATABASE_URL" in env or target.exists():
        manage(env, "migrate", "--noinput", "-v0")
        return
    if not _migrated_sqlite:
        folder = Path(tempfile.mkdtemp(prefix="recourse-migrated-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        manage(embedded_env(folder), "migrate", "--noinput", "-v0")
        _migrated_sqlite.append(folder / "db.sqlite3")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(_migrated_sqlite[0], target)


def prepare(env: dict[str, str], pool_size: int = 3683) -> None:
    migrate(env)
    manage(env, "create_demo_study", "--no-admin", "--pool-size", str(pool_size))


def _wait_for(predicate, what: str, timeout: float, procs: list[subprocess.Popen]) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for p in procs:
            if p.poll() is not None:
                raise RuntimeError(f"{what}: a process exited early with status {p.returncode}")
        if predicate():
            return
        time.sleep(0.2)
    raise RuntimeError(f"{what}: not ready after {timeout:g}s")


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


@contextmanager
def running(
    env: dict[str, str],
    log_dir: Path,
    web_workers: int = 2,
    web_args: Sequence[str] | None = None,
    worker_args: Sequence[str] = ("--pool=solo",),
) -> Iterator[str]:
    """A Celery worker process and gunicorn; yields the base URL; stops both afterwards.

    `web_args` replace `--workers N` (e.g. the host-sized `-c python:studyapp.config.gunicorn`);
    `worker_args` choose the worker's pool."""
    port = free_port()
    env = {**env, "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost,testserver"}
    worker_log = log_dir / "worker.log"
    procs: list[subprocess.Popen] = []
    with open(worker_log, "w") as wlog, open(log_dir / "web.log", "w") as glog:
        procs.append(
            warm_python.start(
                [str(VENV_BIN / "celery"), "-A", "studyapp", "worker", *worker_args,
                 "--loglevel=INFO", "--without-gossip", "--without-mingle"], ROOT, env, wlog,
            )
        )  # fmt: skip
        procs.append(
            warm_python.start(
                [str(VENV_BIN / "gunicorn"), "studyapp.config.wsgi", "--bind", f"127.0.0.1:{port}",
                 *(web_args or ("--workers", str(web_workers))), "--timeout", "180",
                 "--access-logfile", "-"], ROOT, env, glog,
            )
        )  # fmt: skip
        try:
            _wait_for(lambda: _port_open(port), "gunicorn", 60, procs)
            _wait_for(lambda: " ready." in worker_log.read_text(), "celery worker", 90, procs)
            yield f"http://127.0.0.1:{port}"
        finally:
            # worker: killed (the test is over; even a cold shutdown waits seconds for
            # its consumer loop); gunicorn: quick shutdown (SIGINT) to the master
            # alone, which stops its workers: a gthread worker that gets the group's SIGINT and
            # then the master's SIGQUIT can deadlock in its quit handler (gunicorn 27.0.1) and
            # is killed only after the graceful timeout (30 s)
            celery, web = procs
            if celery.poll() is None:
                os.killpg(celery.pid, signal.SIGKILL)
            if web.poll() is None:
                os.kill(web.pid, signal.SIGINT)
            for p in procs:
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()


def succeeded_tasks(log_dir: Path) -> int:
    """Recourse tasks the worker reports as finished (one line per run)."""
    lines = (log_dir / "worker.log").read_text().splitlines()
    return sum(1 for line in lines if "generate_recourses[" in line and "succeeded" in line)


#: where Debian/Ubuntu install the PostgreSQL server programs (not on PATH)
POSTGRES_BIN_GLOB = "/usr/lib/postgresql/*/bin"


def postgres_bin_dir() -> Path | None:
    """The folder with `initdb` and `pg_ctl`: on PATH, else the newest Debian-style one."""
    import shutil

    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).parent
    dirs = [Path(d) for d in Path("/").glob(POSTGRES_BIN_GLOB.lstrip("/"))]
    dirs = [d for d in dirs if (d / "initdb").exists() and (d / "pg_ctl").exists()]
    return max(
        dirs, key=lambda d: int(d.parent.name) if d.parent.name.isdigit() else 0, default=None
    )


class OwnPostgres:
    """A PostgreSQL cluster of the test's own (trust auth, a free port, a temp folder), which
    the test may stop and start: the shared server is never touched. As root, the server
    runs as the `postgres` account (PostgreSQL refuses to run as root)."""

    def __init__(self, bin_dir: Path, user: str | None) -> None:
        import tempfile

        self.bin_dir, self.user = bin_dir, user
        self.dir = Path(tempfile.mkdtemp(prefix="recourse-pg-"))
        self.data, self.log = self.dir / "data", self.dir / "server.log"
        self.port = free_port()
        self.url = f"postgres://postgres@127.0.0.1:{self.port}"
        if user is not None:
            import shutil

            shutil.chown(self.dir, user)

    def _run(self, *args: str, timeout: float = 60) -> None:
        r = subprocess.run(
            args, capture_output=True, text=True, timeout=timeout, cwd=self.dir,
            user=self.user, extra_groups=[] if self.user else None,
        )  # fmt: skip
        if r.returncode != 0:
            tail = self.log.read_text()[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"{' '.join(args)} failed: {r.stdout}{r.stderr}{tail}")

    def initdb(self) -> None:
        self._run(str(self.bin_dir / "initdb"), "-D", str(self.data), "-U", "postgres",
                  "-A", "trust", "-E", "UTF8", "--no-sync")  # fmt: skip

    def start(self) -> None:
        options = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run(str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-l", str(self.log),
                  "-o", options, "-w", "-t", "60", "start")  # fmt: skip

    def stop(self, mode: str = "fast") -> None:
        """`fast`: end every session, then shut down; `immediate`: quit at once (a crash)."""
        self._run(str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w",
                  "-t", "60", "stop")  # fmt: skip

    def running(self) -> bool:
        return (self.data / "postmaster.pid").exists()


@contextmanager
def own_postgres() -> Iterator[OwnPostgres]:
    """Start a throwaway PostgreSQL cluster; stop and delete it afterwards. Skips (fails in
    CI, RECOURSE_REQUIRE_SERVICES=1) when the server programs or, as root, the `postgres`
    account are absent."""
    import pwd
    import shutil

    from tests.services import require_executable, services_required

    bin_dir = postgres_bin_dir()
    if bin_dir is None:
        require_executable("initdb", f"PostgreSQL server programs, on PATH or {POSTGRES_BIN_GLOB}")
    user = None
    if os.geteuid() == 0:
        try:
            user = pwd.getpwnam("postgres").pw_name
        except KeyError:
            import pytest

            reason = "running as root and there is no `postgres` account to run a server as"
            if services_required():
                pytest.fail(f"required service absent (RECOURSE_REQUIRE_SERVICES=1): {reason}")
            pytest.skip(reason)
    pg = OwnPostgres(bin_dir, user)  # type: ignore[arg-type]
    try:
        pg.initdb()
        pg.start()
        yield pg
    finally:
        if pg.running():
            pg.stop("immediate")
        shutil.rmtree(pg.dir, ignore_errors=True)
