"""`recourse-study serve`: the platform served as `scripts/run` serves the checkout, for an
installed package too: gunicorn (sized for the host by `studyapp.config.gunicorn`) and a
Celery worker with beat beside it (the sweeper and the delayed-release schedule).

The banner is printed only once the server answers, and after the first page has been asked
for by as many requests as gunicorn has processes (each process loads the app on its first
request; the first participant should not wait for that). Ctrl-C stops both; when either
process ends on its own, the other is stopped and the command fails."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NoReturn

from recourse_study.ports import PortError, choose_port, parse_port

PROG = "recourse-study serve"
WORKER = ["-m", "celery", "-A", "studyapp", "worker", "--beat", "--scheduler",
          "django_celery_beat.schedulers:DatabaseScheduler", "--pool=solo", "--loglevel=WARNING"]  # fmt: skip
WEB = ["-m", "gunicorn", "studyapp.config.wsgi", "-c", "python:studyapp.config.gunicorn",
       "--log-level", "warning"]  # fmt: skip


class ServeError(RuntimeError):
    """The platform could not be served; the message says why."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Serve the study platform: gunicorn and a Celery worker (Ctrl-C stops both).",
    )
    parser.add_argument(
        "--host", default=os.environ.get("HOST") or "127.0.0.1", help="default: $HOST or 127.0.0.1"
    )
    parser.add_argument(
        "--port",
        default=None,
        help="default: $PORT, else 8000 (or the next free port when 8000 is taken)",
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help="first create the demo car-loan study (create_demo_study) and print its link "
        "and admin login",
    )
    parser.add_argument(
        "--no-worker", action="store_true", help="the web server only (a worker runs elsewhere)"
    )
    parser.add_argument(
        "--ready-timeout", type=float, default=120.0, help="seconds to wait for the server"
    )

    def error(message: str) -> NoReturn:
        sys.stderr.write(f"error: {message}\n")
        sys.exit(2)

    parser.error = error  # type: ignore[method-assign]
    return parser


def _asked_port(opts: argparse.Namespace) -> int | None:
    if opts.port is not None:
        return parse_port(opts.port, "--port")
    if os.environ.get("PORT"):
        return parse_port(os.environ["PORT"], "PORT")
    return None


def _demo(base: str) -> list[str]:
    """The demo study's participant link and admin login lines (created on first run)."""
    from io import StringIO

    from django.core.management import CommandError, call_command

    out = StringIO()
    try:
        call_command("create_demo_study", base_url=base, stdout=out)
    except CommandError as exc:
        raise ServeError(f"create_demo_study: {exc}") from None
    return [
        line
        for line in out.getvalue().splitlines()
        if line.startswith(("Participant link:", "Admin:"))
    ]


def _answers(url: str) -> bool:
    """Whether the server gives an HTTP answer below 500 at `url`."""
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status < 500
    except urllib.error.HTTPError as exc:
        return exc.code < 500
    except OSError:
        return False


def wait_until_answers(
    url: str, procs: dict[str, subprocess.Popen], timeout: float, answers: Callable[[str], bool]
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for name, proc in procs.items():
            if proc.poll() is not None:
                raise ServeError(f"the {name} stopped while starting (exit {proc.returncode})")
        if answers(url):
            return
        time.sleep(0.25)
    raise ServeError(f"the server did not answer {url} within {timeout:g} s")


def warm(url: str, requests: int) -> None:
    """Ask for the first page `requests` times at once: a gunicorn process loads the app's
    views, templates and engine on its first request (seconds), and concurrent requests
    spread over the processes, so the first participant does not pay for it."""
    with ThreadPoolExecutor(max_workers=requests) as pool:
        list(pool.map(_answers, [url] * requests))


def _shown(path: Path) -> str:
    """`path` relative to the current folder when it lies inside it (as the README shows it)."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _stop(procs: dict[str, subprocess.Popen]) -> None:
    for proc in procs.values():
        if proc.poll() is None:
            proc.terminate()
    deadline = time.monotonic() + 30
    for proc in procs.values():
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def serve(opts: argparse.Namespace, port: int, note: str | None) -> int:
    import django
    from django.conf import settings
    from django.db import connections

    from studyapp.config import gunicorn as web_config

    host = opts.host
    base = f"http://{host}:{port}"
    local = f"http://{'127.0.0.1' if host in ('0.0.0.0', '') else host}:{port}"
    django.setup()
    lines = _demo(base) if opts.demo else []
    connections.close_all()  # the children open their own
    first_page = f"{local}/s/carloan/" if opts.demo else f"{local}/"
    var = Path(settings.VAR_DIR)
    var.mkdir(parents=True, exist_ok=True)
    worker_log = var / "worker.log"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "studyapp.config.settings"}
    procs: dict[str, subprocess.Popen] = {}
    signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        if not opts.no_worker:
            with open(worker_log, "ab") as log:
                procs["worker"] = subprocess.Popen(
                    [sys.executable, *WORKER], env=env, stdout=log, stderr=subprocess.STDOUT
                )
        procs["web server"] = subprocess.Popen(
            [sys.executable, *WEB, "--bind", f"{host}:{port}"], env=env
        )
        wait_until_answers(first_page, procs, opts.ready_timeout, _answers)
        warm(first_page, max(2, web_config.workers))
        print()
        if note:
            print(note)
        where = "no worker" if opts.no_worker else f"worker log: {_shown(worker_log)}"
        print(f"Recourse Study Platform is running at {base}/ ({where})")
        for line in lines:
            print(line)
        stops = "the web server" if opts.no_worker else "the web server and the worker"
        print(f"Press Ctrl-C to stop {stops}.", flush=True)
        while True:
            for name, proc in procs.items():
                if proc.poll() is not None:
                    raise ServeError(f"the {name} stopped (exit {proc.returncode})")
            time.sleep(0.5)
    except KeyboardInterrupt:
        return 0
    finally:
        _stop(procs)


def main(args: list[str]) -> int:
    from recourse_study import database

    opts = build_parser().parse_args(args)
    try:
        # a bad or taken port is refused before anything is set up
        port, note = choose_port(opts.host, _asked_port(opts))
        problem = database.ensure_migrated(sys.stderr)
        if problem:
            sys.stderr.write(problem + "\n")
            return 2
        return serve(opts, port, note)
    except (PortError, ServeError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2 if isinstance(exc, PortError) else 1
