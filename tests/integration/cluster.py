"""The pieces of a several-node deployment for a test, each a process of the test's own with
its configuration in a temp folder (the machine's own haproxy and pgbouncer configuration
is never read or touched): HAProxy in front of gunicorn nodes, PgBouncer in transaction
mode in front of PostgreSQL, and gunicorn or Celery processes that can be killed and
started again. Everything started here is stopped by its PID.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from tests import warm_python
from tests.integration.stack import ROOT, VENV_BIN, _port_open, _wait_for

#: the balancer's own error pages (deploy/errors/CODE.http)
ERROR_PAGES = (502, 503, 504)
#: where Debian installs both (not always on a user's PATH)
SBIN = Path("/usr/sbin")


def executable(name: str, package: str) -> str:
    """The program's path, or skip (fail in CI) naming the Debian package to install."""
    from tests.services import require_executable

    found = shutil.which(name) or (str(SBIN / name) if (SBIN / name).exists() else None)
    return found or require_executable(name, f"apt-get install {package}")


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def _stop(proc: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 15) -> None:
    """Stop a process started in a session of its own (its whole group), then reap it."""
    if proc.poll() is None:
        os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


class Node:
    """A gunicorn master and its workers on one address, killable and restartable there."""

    def __init__(
        self,
        env: dict[str, str],
        host: str,
        log: Path,
        args: Sequence[str],
        prefix: Sequence[str] = (),
    ) -> None:
        """`prefix`: a command that runs gunicorn (e.g. ``taskset -c 0``, which execs it)."""
        self.env, self.host, self.log, self.args = env, host, log, list(args)
        self.prefix = list(prefix)
        self.port = free_port(host)
        self.proc: subprocess.Popen | None = None

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def start(self) -> None:
        self.launch()
        self.wait_up()

    def wait_up(self) -> None:
        assert self.proc is not None
        _wait_for(lambda: port_open(self.host, self.port), "gunicorn", 60, [self.proc])

    def launch(self) -> None:
        """Start the master without waiting for it to listen."""
        with open(self.log, "a") as fh:
            self.proc = warm_python.start(
                [*self.prefix, str(VENV_BIN / "gunicorn"), "studyapp.config.wsgi", "--bind",
                 self.address, *self.args, "--access-logfile", "-"], ROOT, self.env, fh,
            )  # fmt: skip

    def kill(self) -> None:
        """SIGKILL to the master and every worker at once: a machine that went away."""
        assert self.proc is not None
        _stop(self.proc, signal.SIGKILL)

    def stop(self) -> None:
        # SIGINT to the master alone (stack.running says why not to the group)
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                _stop(self.proc, signal.SIGKILL)


class Worker:
    """A Celery worker consuming the given queues."""

    def __init__(self, env: dict[str, str], queues: Sequence[str], log: Path,
                 args: Sequence[str] = ("--pool=solo",)) -> None:  # fmt: skip
        self.log = log
        with open(log, "w") as fh:
            self.proc = warm_python.start(
                [str(VENV_BIN / "celery"), "-A", "studyapp", "worker", "-Q", ",".join(queues),
                 *args, "--loglevel=INFO", "--without-gossip", "--without-mingle"], ROOT, env, fh,
            )  # fmt: skip

    def wait_ready(self) -> None:
        _wait_for(lambda: " ready." in self.log.read_text(), "celery worker", 90, [self.proc])

    def stop(self) -> None:
        _stop(self.proc, signal.SIGKILL)  # the test is over (stack.running says why KILL)


def _own_dir(prefix: str, user: str | None) -> Path:
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    if user is not None:
        shutil.chown(folder, user)
    return folder


@contextmanager
def haproxy(backends: Sequence[str], health_path: str = "/healthz") -> Iterator[dict[str, object]]:
    """HAProxy on a free port, round robin over `backends` (``host:port``), each checked on
    `health_path` twice a second: two failed checks take a node out, two passed ones bring
    it back; a check may take 5 s (a busy node is slow, not gone). A connection refused or closed without an answer is tried on another node
    (``retry-on``; the app stores a page's answer once, so a replay cannot store it twice).
    Yields ``url`` and ``states()`` (each server's UP/DOWN from the stats socket)."""
    exe = executable("haproxy", "haproxy")
    folder = _own_dir("recourse-haproxy-", None)
    port, sock = free_port(), folder / "admin.sock"
    servers = "\n".join(f"    server node{i} {b} check" for i, b in enumerate(backends, start=1))
    # the participant's pages of deploy/errors/, as deploy/haproxy.cfg has them
    errorfiles = "\n".join(
        f"    errorfile {code} {ROOT / 'deploy' / 'errors' / f'{code}.http'}"
        for code in ERROR_PAGES
    )
    (folder / "haproxy.cfg").write_text(f"""\
global
    maxconn 2000
    stats socket {sock} mode 600 level admin

defaults
    mode http
    timeout connect 2s
    timeout client 120s
    timeout server 120s
    timeout http-keep-alive 10s
    retries 3
    option redispatch 1
    retry-on conn-failure empty-response
    option forwardfor
{errorfiles}

frontend participants
    bind 127.0.0.1:{port}
    default_backend web

backend web
    balance roundrobin
    option httpchk
    http-check send meth GET uri {health_path}
    http-check expect status 200
    # a node is checked every 500 ms and given 5 s to answer (a busy node is slow, not
    # gone): refused twice, it is out (a killed node refuses at once); passed twice, back in
    timeout check 5s
    default-server inter 500ms fall 2 rise 2
{servers}
""")
    log = open(folder / "haproxy.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen([exe, "-f", str(folder / "haproxy.cfg"), "-db"], stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip

    def states() -> dict[str, str]:
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(str(sock))
            s.sendall(b"show stat\n")
            raw = b"".join(iter(lambda: s.recv(65536), b"")).decode()
        rows = [line.split(",") for line in raw.splitlines() if line.startswith("web,node")]
        return {r[1]: r[17] for r in rows}  # svname, status

    try:
        _wait_for(lambda: _port_open(port) and sock.exists(), "haproxy", 20, [proc])
        yield {"url": f"http://127.0.0.1:{port}", "states": states, "log": folder / "haproxy.log"}
    finally:
        _stop(proc)
        log.close()
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def pgbouncer(
    server_host: str, server_port: int, pool_size: int = 10
) -> Iterator[dict[str, object]]:
    """PgBouncer in transaction mode on a free port, every database of the server behind
    it, trust auth for `postgres` (the test server's own rule). PgBouncer refuses to run as
    root: as root it runs as the `postgres` account, as OwnPostgres does. Yields ``port``,
    ``pool_size`` and ``show(what)`` (its admin console's ``SHOW <what>`` rows, via psql)."""
    import pwd

    exe = executable("pgbouncer", "pgbouncer")
    user = None
    if os.geteuid() == 0:
        try:
            user = pwd.getpwnam("postgres").pw_name
        except KeyError:
            import pytest

            pytest.skip("running as root and there is no `postgres` account to run PgBouncer as")
    folder = _own_dir("recourse-pgbouncer-", user)
    port = free_port()
    (folder / "userlist.txt").write_text('"postgres" ""\n')
    (folder / "pgbouncer.ini").write_text(f"""\
[databases]
* = host={server_host} port={server_port}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {port}
unix_socket_dir =
auth_type = trust
auth_file = {folder / "userlist.txt"}
admin_users = postgres
pool_mode = transaction
default_pool_size = {pool_size}
max_client_conn = 1000
ignore_startup_parameters = extra_float_digits,options
logfile = {folder / "pgbouncer.log"}
""")
    for f in folder.iterdir():
        if user is not None:
            shutil.chown(f, user)
    proc = subprocess.Popen([exe, str(folder / "pgbouncer.ini")], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True,
                            user=user, extra_groups=[] if user else None)  # fmt: skip

    def show(what: str) -> list[dict[str, str]]:
        psql = shutil.which("psql") or "psql"
        r = subprocess.run(
            [psql, "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-d", "pgbouncer",
             "-A", "-F", "\t", "-P", "footer=off", "-c", f"SHOW {what}"],
            capture_output=True, text=True, timeout=20, check=True,
        )  # fmt: skip
        header, *rows = r.stdout.splitlines()
        return [dict(zip(header.split("\t"), row.split("\t"), strict=True)) for row in rows]

    try:
        _wait_for(lambda: _port_open(port), "pgbouncer", 20, [proc])
        yield {"port": port, "pool_size": pool_size, "show": show, "dir": folder}
    finally:
        _stop(proc)
        shutil.rmtree(folder, ignore_errors=True)


def wait(predicate, what: str, timeout: float) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise RuntimeError(f"{what}: not so after {timeout:g}s")
