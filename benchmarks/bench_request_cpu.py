"""Server CPU per participant request, in-process, through the whole WSGI application.

Walks N bots (`simulation.bots.Bot`) through a live car-loan study (600-profile synthetic
pool, the test suite's study) on a fresh embedded-default database (SQLite and the
SQLite-backed broker in a temporary folder). Each request goes through
`studyapp.config.wsgi.application` — every middleware, the URL resolver, the view, the
template, the response's iteration and close (which ends the request's database use), as
gunicorn calls it — and its CPU is this thread's CPU time across that call
(`time.thread_time`), so the bot's own work (building forms, parsing pages) is not counted.
The worker's part (selecting the recourses) runs between requests, untimed, when a bot
first polls for them: it is the worker's CPU, not a web request's. The CSRF token is sent as
a browser's form sends it (from the cookie), so the CSRF check does its real work.

    .venv/bin/python benchmarks/bench_request_cpu.py --n 40 [--json out.json]

Prints the CPU per request by kind (median, ms), the mean over every request and the load
average before and after. The machine's other work inflates the figures: compare runs taken
alternately in the same window.
"""

from __future__ import annotations

import cProfile
import io
import json
import os
import re
import statistics
import sys
import tempfile
import time
import urllib.parse
from collections import defaultdict
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.cli import OneLineParser  # noqa: E402 - after the path is set

_PAGE = re.compile(r'name="page" value="([^"]*)"')


class WsgiClient:
    """A browser-like client that calls the WSGI application directly: keeps cookies,
    posts the CSRF token from its cookie, follows no redirect; times each call."""

    def __init__(self, app: Any, on_status: Any, profiler: Any = None) -> None:
        self.app = app
        self.profiler = profiler  # a cProfile.Profile on around the application's calls only
        self.cookies: dict[str, str] = {}
        self.on_status = on_status  # called (untimed) before a status poll: the worker's part
        self.samples: list[tuple[str, float]] = []

    def _call(self, method: str, url: str, body: bytes = b"") -> Any:
        from studyapp.simulation.bots import HttpResponse

        path, _, query = url.partition("?")
        environ = {
            "REQUEST_METHOD": method,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "8000",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": "127.0.0.1",
            "HTTP_HOST": "127.0.0.1:8000",
            "HTTP_USER_AGENT": "Mozilla/5.0 (bench)",
            "HTTP_ACCEPT_LANGUAGE": "en",
            "HTTP_COOKIE": "; ".join(f"{k}={v}" for k, v in self.cookies.items()),
            "wsgi.input": io.BytesIO(body),
            "wsgi.url_scheme": "http",
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": True,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
            "wsgi.version": (1, 0),
        }
        if body:
            environ.update(
                CONTENT_TYPE="application/x-www-form-urlencoded", CONTENT_LENGTH=str(len(body))
            )
        got: dict[str, Any] = {}

        def start_response(status: str, headers: list[tuple[str, str]], exc: Any = None) -> None:
            got["status"], got["headers"] = int(status.split()[0]), headers

        if self.profiler is not None:
            self.profiler.enable()
        t0 = time.thread_time()
        result = self.app(environ, start_response)
        try:
            content = b"".join(result)
        finally:
            result.close()  # request_finished: the connection's end-of-request checks
        cpu = time.thread_time() - t0
        if self.profiler is not None:
            self.profiler.disable()
        headers = dict(got["headers"])
        for name, value in got["headers"]:
            if name.lower() == "set-cookie":
                for morsel in SimpleCookie(value).values():
                    self.cookies[morsel.key] = morsel.value
        kind = "status" if path.endswith("/status") else path.split("/")[1] or "index"
        if method == "POST":
            kind = f"POST {urllib.parse.parse_qs(body.decode()).get('page', [kind])[0]}"
        elif (m := _PAGE.search(content.decode())) is not None:
            kind = f"GET {m.group(1)}"
        elif kind != "status":
            kind = f"GET {kind} (no form)"
        self.samples.append((re.sub(r"-\d+$", "-N", kind), cpu))
        return HttpResponse(got["status"], content, headers)

    def get(self, url: str) -> Any:
        if url.rstrip("/").endswith("/status"):
            self.on_status(url.rstrip("/").rsplit("/", 2)[-2])
        return self._call("GET", url)

    def post(self, url: str, data: dict[str, Any]) -> Any:
        token = self.cookies.get("csrftoken", "")
        body = urllib.parse.urlencode({**data, "csrfmiddlewaretoken": token}, doseq=True)
        return self._call("POST", url, body.encode())


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=40, help="bots, one after another (1..1000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default="", help="also write the samples' summary to this file")
    p.add_argument(
        "--profile", default="", help="write a cProfile of the requests alone to this file"
    )
    a = p.parse_args(argv)
    if not 1 <= a.n <= 1000:
        p.error(f"--n must be 1..1000, got {a.n}")
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="bench-request-cpu-") as tmp:
        for k in ("DATABASE_URL", "CELERY_BROKER_URL", "STUDYAPP_CACHE_URL"):
            os.environ.pop(k, None)
        os.environ.update(
            STUDYAPP_VAR_DIR=tmp,
            STUDYAPP_METRICS_DIR=str(Path(tmp) / "metrics"),
            DJANGO_SETTINGS_MODULE="studyapp.config.settings",
        )
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        from studyapp.config.wsgi import application  # warmed up and frozen, as gunicorn's
        from studyapp.generation.services import recourses_generate
        from studyapp.models import Participant
        from studyapp.simulation.bots import Bot
        from tests.studyapp.conftest import make_study

        study = make_study()
        done: set[str] = set()

        def worker(code: str) -> None:
            if code not in done:
                done.add(code)
                pk = Participant.objects.values_list("pk", flat=True).get(code=code)
                recourses_generate(participant_id=pk, may_wait=False)

        profiler = cProfile.Profile() if a.profile else None
        client = WsgiClient(application, worker, profiler)
        outcomes: dict[str, int] = defaultdict(int)
        for i in range(a.n):
            client.cookies.clear()  # a new participant: a new browser
            result = Bot(study, seed=a.seed + i, client=client, poll_seconds=0).run()
            outcomes[result.outcome] += 1
    if profiler is not None:
        profiler.dump_stats(a.profile)  # its overhead inflates the CPU figures of this run
    by_kind: dict[str, list[float]] = defaultdict(list)
    for kind, cpu in client.samples:
        by_kind[kind].append(cpu * 1000)
    every = [c * 1000 for _, c in client.samples]
    summary = {
        "bots": a.n,
        "outcomes": dict(outcomes),
        "requests": len(every),
        "mean_ms": statistics.fmean(every),
        "median_ms": statistics.median(every),
        "by_kind_median_ms": {k: statistics.median(v) for k, v in sorted(by_kind.items())},
        "by_kind_count": {k: len(v) for k, v in sorted(by_kind.items())},
        "load_before": load_before,
        "load_after": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }
    print(f"{a.n} bots, outcomes {dict(outcomes)}; load average before {load_before}, "
          f"after {summary['load_after']}")  # fmt: skip
    print(f"{'request':<32}{'n':>6}{'median ms':>11}")
    for kind, values in sorted(by_kind.items()):
        print(f"{kind:<32}{len(values):>6}{statistics.median(values):>11.2f}")
    print(f"all requests: {len(every)}, mean {summary['mean_ms']:.2f} ms, "
          f"median {summary['median_ms']:.2f} ms of CPU per request")  # fmt: skip
    if a.json:
        Path(a.json).write_text(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
