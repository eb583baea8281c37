"""A warm Python for the tests' child commands: one interpreter per test process that has
imported the heavy libraries (numpy, pandas, scipy, Django's own modules, the analysis and
engine packages) and forks a child for each command, which then runs as a fresh
`python manage.py ...` or `recourse-study ...` would from that point: its own process and
process group, its own working folder, environment, stdout and stderr, exit status, and the
project's settings read from that environment (nothing of the project's Django apps is
imported before the fork, and no settings are configured). What differs from a cold start:
the preloaded libraries read their own environment variables (BLAS and OpenMP thread
counts, say) when the interpreter started, from the test process's environment, and every
child shares the interpreter's hash seed.

Why: each `manage.py` or `recourse-study` started from nothing spends 1-2 s of CPU importing
libraries before the command starts, and the integration and command-line tests start
hundreds of them. Set `RECOURSE_WARM_PYTHON=0` to start every command cold (outside
pytest, as in the benchmarks, they start cold unless it is 1).

No library does this: the fork server of `multiprocessing` runs functions, not programs with
their own argv, environment and standard streams.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: imported once by the warm interpreter: libraries that read no settings on import
PRELOAD = (
    "numpy", "pandas", "scipy.stats", "scipy.optimize", "sklearn.base", "jinja2", "pydantic",
    "psycopg", "redis", "celery", "kombu", "requests", "django.db.models", "django.forms",
    "django.contrib.admin", "django.core.management", "rest_framework", "drf_spectacular",
    "analysis.study.methods_report", "recourse_engine.pool",
)  # fmt: skip

#: the interpreter's loop: read one JSON request per line, fork, answer the child's pid
_SERVER = r"""
import importlib, json, os, signal, sys
for name in json.loads(sys.argv[1]):
    try:
        importlib.import_module(name)
    except Exception:  # an optional library: the child imports it itself, or fails as cold
        pass
signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
requests, answers = sys.stdin, sys.stdout
answers.write("ready\n"); answers.flush()
for line in requests:
    job = json.loads(line)
    pid = os.fork()
    if pid:
        answers.write(f"{pid}\n"); answers.flush()
        continue
    # the child: a program of its own from here
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.setsid()
    os.chdir(job["cwd"])
    os.environ.clear(); os.environ.update(job["env"])
    fd = os.open(os.devnull, os.O_RDONLY); os.dup2(fd, 0); os.close(fd)
    for target, path in ((1, job["stdout"]), (2, job["stderr"])):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(fd, target); os.close(fd)
    sys.stdin = open(0, closefd=False)
    sys.stdout = open(1, "w", buffering=1, closefd=False)
    sys.stderr = open(2, "w", buffering=1, closefd=False)
    sys.argv = job["argv"]
    # as a cold start has it: the script's folder, or (python -m) the working folder
    sys.path[0] = job["cwd"] if job["kind"] == "module" else os.path.dirname(
        os.path.abspath(job["argv"][0]))
    import atexit
    def _status(path=job["status"], me=os.getpid()):
        if os.getpid() != me:  # a process this one forked (a gunicorn worker) ends
            return
        code = getattr(sys, "_warm_code", 1)
        with open(path + ".tmp", "w") as fh: fh.write(str(code))
        os.replace(path + ".tmp", path)
    atexit.register(_status)
    sys._warm_code = 1
    try:
        if job["kind"] in ("script", "module"):
            import runpy
            if job["kind"] == "script":
                runpy.run_path(job["argv"][0], run_name="__main__")
            else:
                runpy.run_module(job["entry"], run_name="__main__", alter_sys=True)
            sys._warm_code = 0
        else:
            module, func = job["entry"].split(":")
            sys._warm_code = importlib.import_module(module).__dict__[func]() or 0
    except SystemExit as exc:
        code = exc.code
        if code is not None and not isinstance(code, int):
            sys.stderr.write(f"{code}\n")
            code = 1
        sys._warm_code = code or 0
    except BaseException:
        import traceback; traceback.print_exc()
        sys._warm_code = 1
    sys.stdout.flush(); sys.stderr.flush()
    sys.exit(sys._warm_code)
"""


class _Server:
    """The warm interpreter of this test process (started on first use, one per process)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.proc: subprocess.Popen | None = None
        self.owner = 0

    def spawn(self, job: dict) -> int:
        with self.lock:
            if self.proc is None or self.proc.poll() is not None or self.owner != os.getpid():
                self.proc = subprocess.Popen(
                    [sys.executable, "-c", _SERVER, json.dumps(PRELOAD)],
                    cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                    env={k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"},
                )  # fmt: skip
                self.owner = os.getpid()
                assert self.proc.stdout and self.proc.stdout.readline().strip() == "ready"
            assert self.proc.stdin and self.proc.stdout
            self.proc.stdin.write(json.dumps(job) + "\n")
            self.proc.stdin.flush()
            return int(self.proc.stdout.readline())


_server = _Server()


def enabled() -> bool:
    """Under pytest, unless `RECOURSE_WARM_PYTHON=0`; elsewhere (the benchmarks, which read
    their servers' CPU as this process's children) only with `RECOURSE_WARM_PYTHON=1`."""
    default = "1" if "PYTEST_CURRENT_TEST" in os.environ else "0"
    return os.environ.get("RECOURSE_WARM_PYTHON", default) != "0" and hasattr(os, "fork")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class WarmProcess:
    """A child of the warm interpreter, with the part of `subprocess.Popen`'s interface that
    the tests use: `pid` (also its process group), `poll`, `wait` and `returncode`."""

    def __init__(self, argv: list[str], pid: int, status: str) -> None:
        self.args, self.pid, self._status = argv, pid, status
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            if os.path.exists(self._status):
                with open(self._status) as fh:
                    text = fh.read().strip()
                if not _alive(self.pid):  # after its last flush
                    self.returncode = int(text) if text.lstrip("-").isdigit() else 1
            elif not _alive(self.pid):
                self.returncode = -signal.SIGKILL  # ended without its exit handler: killed
            if self.returncode is not None:
                shutil.rmtree(os.path.dirname(self._status), ignore_errors=True)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        delay = 0.01
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            time.sleep(delay)
            delay = min(delay * 1.5, 0.1)
        return self.returncode  # type: ignore[return-value]

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, signal.SIGKILL)


def popen(
    argv: list[str],
    cwd: Path,
    env: dict[str, str],
    stdout: str,
    stderr: str | None = None,
    entry: str | None = None,
    module: str | None = None,
) -> WarmProcess:
    """Start `argv` (see `run`) in a session of its own, its output appended to the files
    `stdout` and `stderr` (the same file when `stderr` is None), and return at once."""
    folder = tempfile.mkdtemp(prefix="warm-")
    status = os.path.join(folder, "status")
    kind = "module" if module else "entry" if entry else "script"
    job = {"argv": argv, "cwd": str(cwd), "env": env, "stdout": stdout,
           "stderr": stderr or stdout, "status": status, "kind": kind,
           "entry": module or entry}  # fmt: skip
    return WarmProcess(argv, _server.spawn(job), status)


def run(
    argv: list[str],
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    entry: str | None = None,
    module: str | None = None,
) -> subprocess.CompletedProcess:
    """`argv` (a script path and its arguments; with `entry` "module:function" the
    program's name and arguments, as a console script has them; with `module`, `python -m
    module`'s argv, the first item ignored) in a child of the warm interpreter; like `subprocess.run(..., capture_output=True, text=True)`, and
    `subprocess.TimeoutExpired` (the child's process group killed) after `timeout` s."""
    with tempfile.TemporaryDirectory(prefix="warm-") as tmp:
        out, err = os.path.join(tmp, "out"), os.path.join(tmp, "err")
        proc = popen(argv, cwd, env, out, err, entry, module)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise

        def read(path: str) -> str:
            if not os.path.exists(path):
                return ""
            with open(path, encoding="utf-8", errors="replace") as fh:
                return fh.read()

        return subprocess.CompletedProcess(argv, proc.returncode, read(out), read(err))


#: the console scripts the tests start, as `module:function`
ENTRIES = {"celery": "celery.__main__:main", "gunicorn": "gunicorn.app.wsgiapp:run"}


def start(
    argv: list[str], cwd: Path, env: dict[str, str], log: object
) -> subprocess.Popen | WarmProcess:
    """A server the tests start (`celery ...`, `gunicorn ...`: `argv[0]` the console
    script's path) in a session of its own, its output to the open file `log` (or
    `subprocess.DEVNULL`): warm where enabled, else with `subprocess.Popen`."""
    name = Path(argv[0]).name
    if enabled() and name in ENTRIES:
        path = os.devnull if log is subprocess.DEVNULL else log.name  # type: ignore[attr-defined]
        return popen(argv, cwd, env, path, entry=ENTRIES[name])
    return subprocess.Popen(argv, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)  # fmt: skip


def python(
    args: list[str], cwd: Path, env: dict[str, str], timeout: float = 600
) -> subprocess.CompletedProcess:
    """`python ARGS` (a script and its arguments, or `-m module ...`), warm where enabled,
    else with `subprocess.run`; captured as text either way."""
    if enabled():
        if args[0] == "-m":
            return run(args[1:], cwd, env, timeout, module=args[1])
        return run(args, cwd, env, timeout)
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)  # fmt: skip
