"""Concurrent simulated participants over real HTTP: the bots of `bots`, many at once, each
waiting a think time before it submits a page, with every request timed by page type.

Threads, not processes: a participant spends nearly all its time sleeping (thinking, or
waiting between status polls as the waiting page's script does), so one process with a
thread per participant stays cheap in CPU beside the server it loads; the process measures
its own CPU time so a benchmark can say what the load generator cost. Each participant keeps
one connection open as a browser does (`bots.HttpClient`, `keepalive`).

Everything a bot submits is kept (`LoadResult.sent`) for `load_verify` to compare with the
database afterwards.

`retry_errors` (off by default, so a benchmark counts every error): a bot that gets a server
error or no answer does what the error page asks a person to do, waits a moment and reloads
the page, and sends its answer again only if the reloaded page still asks for it (an answer
stored before the error is never sent twice); a bounded number of times in a row, each reload
counted. With it each bot arrives with a panel id of its own (`pid`), so a start button
pressed again resumes the same participant instead of making a second one.
"""

from __future__ import annotations

import html
import http.client
import random
import re
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from studyapp.models import Study
from studyapp.simulation.bots import _PAGE, Bot, BotError, HttpClient, HttpResponse
from studyapp.simulation.think_time import parse_think

__all__ = [
    "LoadBot",
    "LoadReport",
    "LoadResult",
    "Sample",
    "ServerTrouble",
    "parse_think",
    "run_load",
]

#: the waiting page's script: first poll after 0.5 s, then 1.5 times longer, at most 3 s
POLL_FIRST_S, POLL_GROWTH, POLL_MAX_S = 0.5, 1.5, 3.0
#: after a server error: the first reload after 1 s, then 1.5 times longer, at most 5 s
#: (the error page asks for a reload "in a few seconds")
RETRY_FIRST_S, RETRY_GROWTH, RETRY_MAX_S = 1.0, 1.5, 5.0
#: the most retries in a row `run_load` accepts
MAX_RETRY_ERRORS = 100
_EVALUATION = re.compile(r"^evaluation-\d+$")
_TAG = re.compile(r"<(script|style)\b.*?</\1>|<[^>]+>", re.S | re.I)
#: the first characters of an error page's text that a report keeps
ERROR_TEXT_CHARS = 200
#: a participant's error when the run's time limit stopped them
TIME_LIMIT_PASSED = "the load run's time limit passed"


#: seconds a participant stays on a page of the given type before submitting it
Dwell = Callable[[str, random.Random], float]


class ServerTrouble(BotError):
    """A server error or no answer at all: what a participant meets when the server or its
    database fails for a moment (only raised by a client that retries)."""


def page_text(body: bytes) -> str:
    """An error page's visible text, whitespace collapsed, its first characters only."""
    text = html.unescape(_TAG.sub(" ", body.decode(errors="replace")))
    return " ".join(text.split())[:ERROR_TEXT_CHARS]


def page_type(key: str) -> str:
    """A page key as a page type: every plan page is `evaluation`."""
    return "evaluation" if _EVALUATION.match(key) else key


@dataclass(frozen=True)
class Sample:
    """One request: its page type, how long the server took to answer, the HTTP status
    (0: no answer at all: refused, reset or timed out)."""

    label: str
    seconds: float
    status: int
    #: when it was sent (time.monotonic), for figures over a part of a run
    at: float = 0.0


class TimedClient(HttpClient):
    """A bot's browser that times each request, labels it with its page type and thinks
    (sleeps) before each submission, as a person reads and fills the page."""

    def __init__(
        self,
        base_url: str,
        *,
        samples: list[Sample],
        think: tuple[float, float],
        rng: random.Random,
        timeout: float = 30.0,
        deadline: float = float("inf"),
        error_pages: list[str] | None = None,
        raise_errors: bool = False,
        dwell: Dwell | None = None,
    ) -> None:
        super().__init__(base_url, timeout=timeout)
        self.samples = samples
        self.think = think
        #: seconds on a page by its type, in place of the uniform `think` (a benchmark's own
        #: distribution: benchmarks/capacity_dwell.py)
        self.dwell = dwell
        self.rng = rng
        self.deadline = deadline
        #: the text of every server error page received (shared by the run's clients)
        self.error_pages = error_pages if error_pages is not None else []
        #: raise `ServerTrouble` on a server error (a bot that retries), else return it
        self.raise_errors = raise_errors

    def _timed(self, url: str, data: bytes | None, label: Callable[[HttpResponse], str]) -> Any:
        if time.monotonic() > self.deadline:
            raise BotError(TIME_LIMIT_PASSED)
        sent = time.monotonic()
        t0 = time.perf_counter()
        try:
            r = self._open(url, data)
        # refused, reset, timed out, or an answer cut short: no usable HTTP answer (a lost
        # keep-alive connection was already reopened and the request sent again if safe)
        except (OSError, http.client.HTTPException) as exc:
            self.samples.append(
                Sample(label(HttpResponse(0, b"", {})), time.perf_counter() - t0, 0, sent)
            )
            kind = ServerTrouble if self.raise_errors else BotError
            raise kind(f"{url}: no answer ({exc})") from None
        self.samples.append(Sample(label(r), time.perf_counter() - t0, r.status_code, sent))
        if r.status_code >= 500:
            self.error_pages.append(page_text(r.content))
            if self.raise_errors:
                raise ServerTrouble(f"{'POST' if data else 'GET'} {url}: HTTP {r.status_code}")
        return r

    def get(self, url: str) -> HttpResponse:
        return self._timed(url, None, lambda r: _get_label(url, r))

    def post(self, url: str, data: dict[str, Any]) -> HttpResponse:
        page = "start" if url.startswith("/s/") else page_type(str(data.get("page")))
        lo, hi = self.think
        if self.dwell is not None:
            pause = self.dwell(page, self.rng)
        else:
            pause = self.rng.uniform(lo, hi) if hi > 0 else 0.0
        if pause > 0:  # not past the run's end: a participant stopped there sends nothing
            time.sleep(min(pause, max(0.0, self.deadline - time.monotonic())))
        label = page if page == "start" else f"{page} submit"
        return self._timed(url, self._form(data), lambda r: label)


def _get_label(url: str, r: HttpResponse) -> str:
    if url.startswith("/s/"):
        return "welcome"
    if url.rstrip("/").endswith("/status"):
        return "status"
    if r.status_code != 200:
        return "page"
    body = r.content.decode(errors="replace")
    m = _PAGE.search(body)
    if m is not None:
        return page_type(m.group(1))
    return "waiting" if 'id="progress"' in body else "end"


class LoadBot(Bot):
    """A bot that keeps what it submitted on each page and polls the waiting page's status
    the way the page's script does; with `retry_errors` it reloads after a server error as
    the error page asks (see the module's docstring)."""

    def __init__(
        self,
        study: Study,
        *,
        seed: int,
        client: TimedClient,
        retry_errors: int = 0,
        **kwargs: Any,
    ) -> None:
        super().__init__(study, seed=seed, client=client, **kwargs)
        #: page key -> the form data the bot posted there
        self.sent: dict[str, dict[str, Any]] = {}
        #: the participant's code, known once the start button answered
        self.code = ""
        #: reloads allowed in a row after a server error (0: the first error stops the bot)
        self.retry_errors = retry_errors
        #: reloads done after server errors, over the whole walk
        self.retries = 0
        client.raise_errors = retry_errors > 0

    def _pause(self, trouble: ServerTrouble, attempt: int) -> None:
        """Count a reload, or give up after `retry_errors` in a row; wait before it."""
        if attempt >= self.retry_errors:
            raise BotError(f"{trouble} ({attempt} reloads did not help)") from None
        self.retries += 1
        time.sleep(min(RETRY_FIRST_S * RETRY_GROWTH**attempt, RETRY_MAX_S))

    def _arrive(self) -> str:
        attempt = 0
        while True:
            try:
                url = super()._arrive()
                break
            except ServerTrouble as trouble:
                # the welcome page again; its start button resumes the participant that a
                # start stored before the error (the link's panel id)
                self._pause(trouble, attempt)
                attempt += 1
        self.code = url.rstrip("/").rsplit("/", 1)[-1]
        return url

    def _get(self, url: str) -> str:
        return self._reload(url, 0)[0]

    def _reload(self, url: str, attempt: int) -> tuple[str, int]:
        """The page, after as many reloads as it takes (counted from `attempt`)."""
        while True:
            try:
                return super()._get(url), attempt
            except ServerTrouble as trouble:
                self._pause(trouble, attempt)
                attempt += 1

    def _post(self, url: str, data: dict[str, Any]) -> None:
        attempt = 0  # failed submits and reloads of this page, in a row
        while True:
            try:
                super()._post(url, data)
                return
            except ServerTrouble as trouble:
                self._pause(trouble, attempt)
                attempt += 1
            # reload: a page that asks for another answer means this one was stored
            body, attempt = self._reload(url, attempt)
            m = _PAGE.search(body)
            if m is None or html.unescape(m.group(1)) != data.get("page"):
                return

    def _answers(self, page: str, body: str) -> dict[str, Any]:
        data = super()._answers(page, body)
        self.sent[page] = dict(data)
        return data

    def _wait(self, url: str) -> float:
        status_url = url.rstrip("/") + "/status"
        t0, delay = time.monotonic(), POLL_FIRST_S
        attempt = 0
        while time.monotonic() - t0 < self.wait_timeout:
            time.sleep(delay)
            try:
                r = self.client.get(status_url)
            except ServerTrouble as trouble:
                # the page's script polls again later; the bot counts it as a reload
                self._pause(trouble, attempt)
                attempt += 1
                continue
            attempt = 0
            if r.status_code == 200 and r.json().get("ready"):
                return time.monotonic() - t0
            if r.status_code != 200:
                raise BotError(f"{status_url}: HTTP {r.status_code}")
            delay = min(delay * POLL_GROWTH, POLL_MAX_S)
        raise BotError(f"recourses not ready after {self.wait_timeout:g}s")


@dataclass
class LoadResult:
    """One simulated participant: their code, outcome, what they sent and why they stopped
    early (empty when they reached an end page)."""

    index: int
    code: str = ""
    outcome: str = ""
    evaluations: int = 0
    sent: dict[str, dict[str, Any]] = field(default_factory=dict)
    error: str = ""
    #: reloads after a server error (with `retry_errors`)
    retries: int = 0


@dataclass
class LoadReport:
    results: list[LoadResult]
    samples: list[Sample]
    wall_s: float
    cpu_s: float
    concurrency: int
    think: tuple[float, float]
    #: reloads allowed in a row after a server error (0: none)
    retry_errors: int = 0
    #: the text of each server error page received, in arrival order
    error_pages: list[str] = field(default_factory=list)
    #: TCP connections the bots opened (one per bot while the server keeps them open)
    connections: int = 0
    #: requests sent again on a new connection after the server closed a kept one
    resent: int = 0

    @property
    def retries(self) -> int:
        return sum(r.retries for r in self.results)

    @property
    def errors(self) -> list[Sample]:
        """Requests answered with a server error or not at all (4xx answers that a bot
        could not get past are counted with the participant's error)."""
        return [s for s in self.samples if s.status == 0 or s.status >= 500]

    @property
    def failed(self) -> list[LoadResult]:
        return [r for r in self.results if r.error]

    def latency_table(self, samples: list[Sample] | None = None) -> dict[str, dict[str, float]]:
        """Per page type (and `all`): count, p50, p95, p99 and max in milliseconds, over
        `samples` (a part of the run's) or all of them."""
        by: dict[str, list[float]] = {}
        for s in self.samples if samples is None else samples:
            by.setdefault(s.label, []).append(s.seconds)
            by.setdefault("all", []).append(s.seconds)
        table = {}
        for label, values in sorted(by.items(), key=lambda kv: (kv[0] == "all", kv[0])):
            ms = np.asarray(values) * 1000.0
            p50, p95, p99 = np.percentile(ms, [50, 95, 99])
            table[label] = {
                "n": float(len(ms)),
                "p50": float(p50),
                "p95": float(p95),
                "p99": float(p99),
                "max": float(ms.max()),
            }
        return table

    def as_dict(self) -> dict[str, Any]:
        return {
            "participants": len(self.results),
            "concurrency": self.concurrency,
            "think_s": list(self.think),
            "requests": len(self.samples),
            "wall_s": self.wall_s,
            "requests_per_s": len(self.samples) / self.wall_s if self.wall_s else 0.0,
            "errors": len(self.errors),
            "retry_errors": self.retry_errors,
            "retries": self.retries,
            "error_pages": _count(self.error_pages),
            "failed_participants": len(self.failed),
            "connections": self.connections,
            "resent": self.resent,
            "first_failures": [f"#{r.index} {r.code}: {r.error}" for r in self.failed[:10]],
            "outcomes": _count(r.outcome or "unfinished" for r in self.results),
            "generator_cpu_s": self.cpu_s,
            "generator_cpu_share": self.cpu_s / self.wall_s if self.wall_s else 0.0,
            "latency_ms": self.latency_table(),
        }


def _count(items: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items:
        out[item] = out.get(item, 0) + 1
    return out


def run_load(
    study: Study,
    base_url: str,
    *,
    n: int,
    concurrency: int,
    think: tuple[float, float] = (1.0, 3.0),
    seed: int = 0,
    wait_timeout: float = 300.0,
    ramp_s: float | None = None,
    time_limit_s: float = 900.0,
    request_timeout_s: float = 60.0,
    retry_errors: int = 0,
    dwell: Dwell | None = None,
) -> LoadReport:
    """Walk `n` participants through `study` on a running server, `concurrency` at a time.

    The first `concurrency` participants arrive spread evenly over `ramp_s` seconds (by
    default the longest think time: as if they had been arriving all along); each later
    one starts when one before it ends. Nothing runs past `time_limit_s`. `retry_errors`:
    reloads a bot may make in a row after a server error (module docstring). `dwell`: the
    seconds on each page by its type, in place of the uniform `think`.
    """
    if not 1 <= concurrency <= n:
        raise ValueError(f"concurrency must be 1..n ({n}), got {concurrency}")
    if not 0 <= retry_errors <= MAX_RETRY_ERRORS:
        raise ValueError(f"retry_errors must be 0..{MAX_RETRY_ERRORS}, got {retry_errors}")
    # a panel id per bot (retrying only), unique to this run: a start pressed again resumes
    run_id = uuid.uuid4().hex[:12]
    error_pages: list[str] = []
    ramp = think[1] if ramp_s is None else ramp_s
    deadline = time.monotonic() + time_limit_s
    samples: list[Sample] = []  # list.append is atomic: the threads share it
    results = [LoadResult(index=i) for i in range(n)]
    clients = [
        TimedClient(
            base_url,
            samples=samples,
            think=think,
            rng=random.Random(seed * 7919 + i),
            timeout=request_timeout_s,
            deadline=deadline,
            error_pages=error_pages,
            dwell=dwell,
        )
        for i in range(n)
    ]
    bots = [
        LoadBot(
            study,
            seed=seed * 100_003 + i,
            wait_timeout=wait_timeout,
            retry_errors=retry_errors,
            query=f"?pid=load-{run_id}-{i}" if retry_errors else "",
            client=clients[i],
        )
        for i in range(n)
    ]
    started = threading.Event()

    def walk(i: int) -> None:
        started.wait()
        if i < concurrency and ramp > 0:
            time.sleep(ramp * i / concurrency)
        bot, result = bots[i], results[i]
        try:
            out = bot.run()
            result.code, result.outcome, result.evaluations = out.code, out.outcome, out.evaluations
        except BotError as exc:
            result.error = str(exc)
        except Exception as exc:  # noqa: BLE001 - one participant's surprise is reported, not fatal
            result.error = f"{type(exc).__name__}: {exc}"
        finally:
            clients[i].close()  # the participant leaves: the browser tab is closed
        result.sent, result.code = bot.sent, result.code or bot.code
        result.retries = bot.retries

    cpu0, t0 = time.process_time(), time.monotonic()
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="participant") as pool:
        futures = [pool.submit(walk, i) for i in range(n)]
        started.set()
        for f in futures:
            f.result()
    return LoadReport(
        results=results,
        samples=samples,
        wall_s=time.monotonic() - t0,
        cpu_s=time.process_time() - cpu0,
        concurrency=concurrency,
        think=think,
        retry_errors=retry_errors,
        error_pages=error_pages,
        connections=sum(c.connections_opened for c in clients),
        resent=sum(c.requests_resent for c in clients),
    )
