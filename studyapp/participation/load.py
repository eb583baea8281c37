"""Concurrent simulated participants over real HTTP: the bots of `bots`, many at once, each
waiting a think time before it submits a page, with every request timed by page type.

Threads, not processes: a participant spends nearly all its time sleeping (thinking, or
waiting between status polls as the waiting page's script does), so one process with a
thread per participant stays cheap in CPU beside the server it loads; the process measures
its own CPU time so a benchmark can say what the load generator cost.

Everything a bot submits is kept (`LoadResult.sent`) for `load_verify` to compare with the
database afterwards.
"""

from __future__ import annotations

import random
import re
import threading
import time
import urllib.parse
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from studyapp.models import Study
from studyapp.participation.bots import _PAGE, Bot, BotError, HttpClient, HttpResponse
from studyapp.participation.think_time import parse_think

__all__ = ["LoadBot", "LoadReport", "LoadResult", "Sample", "parse_think", "run_load"]

#: the waiting page's script: first poll after 0.5 s, then 1.5 times longer, at most 3 s
POLL_FIRST_S, POLL_GROWTH, POLL_MAX_S = 0.5, 1.5, 3.0
_EVALUATION = re.compile(r"^evaluation-\d+$")


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
    ) -> None:
        super().__init__(base_url, timeout=timeout)
        self.samples = samples
        self.think = think
        self.rng = rng
        self.deadline = deadline

    def _timed(self, url: str, data: bytes | None, label: Callable[[HttpResponse], str]) -> Any:
        if time.monotonic() > self.deadline:
            raise BotError("the load run's time limit passed")
        t0 = time.perf_counter()
        try:
            r = self._open(url, data)
        except OSError as exc:  # refused, reset, timed out: no HTTP answer
            self.samples.append(
                Sample(label(HttpResponse(0, b"", {})), time.perf_counter() - t0, 0)
            )
            raise BotError(f"{url}: no answer ({exc})") from None
        self.samples.append(Sample(label(r), time.perf_counter() - t0, r.status_code))
        return r

    def get(self, url: str) -> HttpResponse:
        return self._timed(url, None, lambda r: _get_label(url, r))

    def post(self, url: str, data: dict[str, Any]) -> HttpResponse:
        lo, hi = self.think
        if hi > 0:
            time.sleep(self.rng.uniform(lo, hi))
        label = "start" if url.startswith("/s/") else f"{page_type(str(data.get('page')))} submit"
        token = next((c.value for c in self.jar if c.name == "csrftoken"), "")
        body = urllib.parse.urlencode({**data, "csrfmiddlewaretoken": token}, doseq=True)
        return self._timed(url, body.encode(), lambda r: label)


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
    the way the page's script does."""

    def __init__(self, study: Study, *, seed: int, client: TimedClient, **kwargs: Any) -> None:
        super().__init__(study, seed=seed, client=client, **kwargs)
        #: page key -> the form data the bot posted there
        self.sent: dict[str, dict[str, Any]] = {}
        #: the participant's code, known once the start button answered
        self.code = ""

    def _arrive(self) -> str:
        url = super()._arrive()
        self.code = url.rstrip("/").rsplit("/", 1)[-1]
        return url

    def _answers(self, page: str, body: str) -> dict[str, Any]:
        data = super()._answers(page, body)
        self.sent[page] = dict(data)
        return data

    def _wait(self, url: str) -> float:
        status_url = url.rstrip("/") + "/status"
        t0, delay = time.monotonic(), POLL_FIRST_S
        while time.monotonic() - t0 < self.wait_timeout:
            time.sleep(delay)
            r = self.client.get(status_url)
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


@dataclass
class LoadReport:
    results: list[LoadResult]
    samples: list[Sample]
    wall_s: float
    cpu_s: float
    concurrency: int
    think: tuple[float, float]

    @property
    def errors(self) -> list[Sample]:
        """Requests answered with a server error or not at all (4xx answers that a bot
        could not get past are counted with the participant's error)."""
        return [s for s in self.samples if s.status == 0 or s.status >= 500]

    @property
    def failed(self) -> list[LoadResult]:
        return [r for r in self.results if r.error]

    def latency_table(self) -> dict[str, dict[str, float]]:
        """Per page type (and `all`): count, p50, p95, p99 and max in milliseconds."""
        by: dict[str, list[float]] = {}
        for s in self.samples:
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
            "failed_participants": len(self.failed),
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
) -> LoadReport:
    """Walk `n` participants through `study` on a running server, `concurrency` at a time.

    The first `concurrency` participants arrive spread evenly over `ramp_s` seconds (by
    default the longest think time: as if they had been arriving all along); each later
    one starts when one before it ends. Nothing runs past `time_limit_s`.
    """
    if not 1 <= concurrency <= n:
        raise ValueError(f"concurrency must be 1..n ({n}), got {concurrency}")
    ramp = think[1] if ramp_s is None else ramp_s
    deadline = time.monotonic() + time_limit_s
    samples: list[Sample] = []  # list.append is atomic: the threads share it
    results = [LoadResult(index=i) for i in range(n)]
    bots = [
        LoadBot(
            study,
            seed=seed * 100_003 + i,
            wait_timeout=wait_timeout,
            client=TimedClient(
                base_url,
                samples=samples,
                think=think,
                rng=random.Random(seed * 7919 + i),
                timeout=request_timeout_s,
                deadline=deadline,
            ),
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
        result.sent, result.code = bot.sent, result.code or bot.code

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
    )
