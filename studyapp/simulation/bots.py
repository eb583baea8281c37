"""Bots that walk the participant pages over HTTP (oTree style), for dry runs and tests.

A bot reads each page it is served (the hidden ``page`` field says which page it is), fills
the form with seeded simulated answers and submits it, exactly as a browser would; on the
waiting page it polls the status endpoint; on the decision page it waits, as the page does,
until its Continue opens (plans ready, minimum time passed) and clicks it. It talks to
Django's test client in-process, or to a running server over real HTTP (`HttpClient`,
cookies and CSRF token handled).

Answers: for the car-loan schema a bot *is* one profile of the engine's synthetic
generator (so items, income, gender and age are correlated as in the pool); for other
schemas items are drawn independently. The response model is deliberately simple: ratings
fall with the recourse's sparsity plus noise, and each changed item is marked impossible
with a small probability. It exists to exercise the flow and the analysis, not to predict
people.
"""

from __future__ import annotations

import html
import http.cookiejar
import json
import re
import sys
import time
import urllib.parse
import urllib.request
import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.test import Client

from recourse_engine import FeatureSchema, carloan_schema, synth_pool
from studyapp.definition import engine_objects, screening
from studyapp.definition.part_questions import posted
from studyapp.definition.question_types import QUESTION_TYPES
from studyapp.definition.questions import Question, attention_question
from studyapp.models import Study
from studyapp.participation import attention, preview, questionnaire
from studyapp.participation.question_forms import FIELD_PREFIX as QUESTION_PREFIX
from studyapp.simulation import keepalive
from studyapp.simulation.screener import ScreenerError, screened, stored

_PAGE = re.compile(r'name="page" value="([^"]*)"')
_RECOURSE = re.compile(r'name="recourse" value="(\d+)"')
_IMPOSSIBLE = re.compile(r'name="impossible_([A-Za-z0-9_]+)"')
_CHANGED_ROWS = re.compile(r'<tr class="changed">')
#: an item of the study's own on the page (a part of one: its name, a dot and the part)
_ITEM = re.compile(rf'name="{re.escape(QUESTION_PREFIX)}([a-z][a-z0-9_]*)[".]')
_HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)"')
_CODE = re.compile(
    r'id="(completion|screenout|no-recourse|quota-full|failed-attention|withdrew|declined'
    r'|approved)-code">'
    r"([^<]+)<"
)
#: what urllib sent before the client kept its connections (Python-urllib/3.x)
USER_AGENT = f"Python-urllib/{sys.version_info.major}.{sys.version_info.minor}"
_OUTCOMES = {
    "completion": "completed",
    "screenout": "screened_out",
    "no-recourse": "no_recourse",
    "quota-full": "quota_full",
    "failed-attention": "failed_attention",
    "withdrew": "withdrew",
    "declined": "declined_consent",
    "approved": "approved",
}


class BotError(RuntimeError):
    """The flow did something a participant could not get past."""


@dataclass
class BotResult:
    code: str = ""
    outcome: str = ""
    completion_code: str = ""
    evaluations: int = 0
    wait_seconds: float | None = None
    pages: list[str] = field(default_factory=list)


class HttpResponse:
    """The slice of Django's test response that a bot reads."""

    def __init__(self, status: int, body: bytes, headers: Any) -> None:
        self.status_code = status
        self.content = body
        self.headers = headers

    def __getitem__(self, name: str) -> str:
        return self.headers[name]

    def json(self) -> Any:
        return json.loads(self.content)


class HttpClient:
    """A browser-like client for a running server: keeps cookies, sends the CSRF token,
    follows no redirect (the caller reads the 3xx) and keeps one connection per origin
    open between requests (`keepalive`), reconnecting when the server closed it."""

    def __init__(self, base_url: str, timeout: float = 30.0) -> None:
        keepalive.origin(base_url)  # a clear error now rather than on the first request
        self.base = base_url.rstrip("/")
        self.timeout = timeout
        self.jar = http.cookiejar.CookieJar()
        self._connections: dict[tuple[str, str], keepalive.KeepAlive] = {}
        # sockets are closed when the client goes, even by a caller that never calls close()
        weakref.finalize(self, _close_all, self._connections)

    @property
    def connections_opened(self) -> int:
        return sum(c.opened for c in self._connections.values())

    @property
    def requests_resent(self) -> int:
        return sum(c.resent for c in self._connections.values())

    def close(self) -> None:
        _close_all(self._connections)

    def _form(self, data: dict[str, Any]) -> bytes:
        """A form's body with the CSRF token from the cookie, as the page's form posts it."""
        token = next((c.value for c in self.jar if c.name == "csrftoken"), "")
        return urllib.parse.urlencode({**data, "csrfmiddlewaretoken": token}, doseq=True).encode()

    def _open(self, url: str, data: bytes | None = None) -> HttpResponse:
        full = url if url.startswith("http") else self.base + url
        key = keepalive.origin(full)
        # a urllib request only for the cookie jar, which reads and fills one
        request = urllib.request.Request(full, data=data, headers={"User-Agent": USER_AGENT})
        if data is not None:
            request.add_header("Content-Type", "application/x-www-form-urlencoded")
        self.jar.add_cookie_header(request)
        connection = self._connections.get(key)
        if connection is None:
            connection = self._connections[key] = keepalive.KeepAlive(*key, self.timeout)
        target = request.selector or "/"
        response, body = connection.request(
            request.get_method(), target, data, dict(request.header_items())
        )
        self.jar.extract_cookies(response, request)
        return HttpResponse(response.status, body, response.headers)

    def get(self, url: str) -> HttpResponse:
        return self._open(url)

    def post(self, url: str, data: dict[str, Any]) -> HttpResponse:
        return self._open(url, self._form(data))


def _close_all(connections: dict[tuple[str, str], keepalive.KeepAlive]) -> None:
    for connection in connections.values():
        connection.close()


def _band_for(q: dict[str, Any], income: float) -> int:
    """The eligible income band whose JPY value is closest to a synthetic income."""
    codes = q.get("eligible") or list(range(1, len(q["options"]) + 1))
    codes = [c for c in codes if c != q.get("undisclosed")]  # "prefer not to say"
    values = {c: screening.income_band_to_jpy(q["options"][c - 1]) for c in codes}
    return min(codes, key=lambda c: abs(values[c] - income))


def _synthetic_person(schema: FeatureSchema, seed: int) -> dict[str, Any] | None:
    """One profile of the engine's synthetic car-loan generator, or None for other schemas."""
    if schema.keys != carloan_schema().keys:
        return None
    return synth_pool(schema, n=1, seed=seed).iloc[0].to_dict()


def _eligible_answers(
    qs: list[dict[str, Any]], rng: np.random.Generator, person: dict[str, Any] | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for q in qs:
        if person is not None and q["key"] == "income" and q["type"] == "choice":
            out["income"] = str(_band_for(q, float(person["income"])))
            continue
        if person is not None and q["key"] == "gender" and person.get("gender") in q["options"]:
            out["gender"] = str(q["options"].index(person["gender"]) + 1)
            continue
        if person is not None and q["key"] == "age" and q["type"] == "integer":
            lo, hi = int(q.get("min", 18)), int(q.get("max", 100))
            out["age"] = str(int(np.clip(int(person["age"]), lo, hi)))
            continue
        if q["type"] == "integer":
            lo, hi = int(q.get("min", 18)), int(q.get("max", 99))
            out[q["key"]] = str(int(rng.integers(max(lo, 20), min(hi, 65) + 1)))
        elif q["type"] == "choice":
            codes = q.get("eligible") or list(range(1, len(q["options"]) + 1))
            out[q["key"]] = str(int(rng.choice(codes)))
        else:
            codes = q.get("eligible_only") or [1]
            out[q["key"]] = [str(int(rng.choice(codes)))]
    return out


#: share of pool-collection bots who keep their income to themselves (the reference survey:
#: 374 of 4,057 respondents, Tominaga et al. App. A)
UNDISCLOSED_RATE = 374 / 4057


def pool_collection_answers(
    study: Study, answers: dict[str, Any], rng: np.random.Generator
) -> dict[str, Any]:
    """A pool-collection survey's screening: some bots choose "prefer not to say"."""
    if study.kind != "pool_collection":
        return answers
    q = next((q for q in screening.questions(study.schema) if q["key"] == "income"), None)
    if q is None or not q.get("undisclosed") or rng.random() >= UNDISCLOSED_RATE:
        return answers
    return {**answers, "income": str(q["undisclosed"])}


def _ineligible_answers(qs: list[dict[str, Any]], rng: np.random.Generator) -> dict[str, Any]:
    out = _eligible_answers(qs, rng, None)
    for q in qs:
        if q["type"] == "choice" and q.get("eligible"):
            bad = [c for c in range(1, len(q["options"]) + 1) if c not in q["eligible"]]
            if bad:
                out[q["key"]] = str(int(rng.choice(bad)))
                return out
    raise BotError("this study's screening has no ineligible answer to give")


def _profile_answers(
    schema: FeatureSchema, rng: np.random.Generator, person: dict[str, Any] | None = None
) -> dict[str, str]:
    if person is not None:
        return {k: str(int(person[k])) for k in schema.keys}
    out = {}
    for item in schema.items:
        if item.is_numeric:
            out[item.key] = f"{rng.uniform(item.low, item.high):.3f}"
        else:
            # lower codes are likelier, so most profiles have room to improve
            n = item.n_options
            p = np.linspace(2.0, 1.0, n)
            out[item.key] = str(int(rng.choice(np.arange(1, n + 1), p=p / p.sum())))
    return out


def question_answer(q: Question, rng: np.random.Generator, error_rate: float = 0.0) -> Any:
    """A simulated answer to a researcher-defined item, as the form posts it (an optional
    item is left unanswered one time in five)."""
    if not q.required and rng.random() < 0.2:
        return ""
    return QUESTION_TYPES[q.type].simulated(q, rng, error_rate)


def _rating(rng: np.random.Generator, sparsity: int) -> str:
    return str(int(np.clip(round(5.5 - 0.35 * sparsity + rng.normal(0, 1.2)), 1, 7)))


class Bot:
    def __init__(
        self,
        study: Study,
        *,
        seed: int,
        eligible: bool = True,
        client: Client | HttpClient | None = None,
        wait_timeout: float = 120.0,
        poll_seconds: float = 0.1,
        screening_overrides: dict[str, Any] | None = None,
        query: str = "",
        attention_error_rate: float = 0.0,
        test: bool = True,
        consent: bool = True,
        end_at_screener: bool = False,
    ) -> None:
        self.study = study
        self.rng = np.random.default_rng(seed)
        self.overrides = dict(screening_overrides or {})
        self.eligible = eligible
        self.client = client or Client()
        self.wait_timeout = wait_timeout
        self.poll_seconds = poll_seconds
        self.schema = engine_objects.schema_of(study.schema)
        self.questions = screening.questions(study.schema)
        #: the link's query string (e.g. "?PROLIFIC_PID=..."), as a panel would send it
        self.query = query
        #: share of attention checks answered wrongly (0: a careful participant)
        self.attention_error_rate = attention_error_rate
        #: arrive through a preview link: a test participant (left out of quotas, condition
        #: counts, the monitor and the export by default); a draft study can be walked too
        self.test = test
        #: agree on the consent page (False: decline)
        self.consent = consent
        # a seed stream apart from the demo pool's (seed 0), so bots are not pool members
        self.person = _synthetic_person(self.schema, 1_000_000_007 + seed)
        #: answer the study's own screener (an item's end rule) so that the study ends for
        #: it (False: so that it goes on); items its answers hide are not on its pages
        self.end_at_screener = end_at_screener
        #: the answers given so far, by the names survey logic uses ("q.age", ...)
        self.given: dict[str, Any] = {}

    def _get(self, url: str) -> str:
        r = self.client.get(url)
        if r.status_code != 200:
            raise BotError(f"GET {url}: HTTP {r.status_code}")
        return r.content.decode()

    def _post(self, url: str, data: dict[str, Any]) -> None:
        r = self.client.post(url, data)
        if r.status_code != 302:
            raise BotError(f"POST {url} ({data.get('page')}): HTTP {r.status_code}")

    def _arrive(self) -> str:
        """Open the study link (the welcome page) and press its start button."""
        link = f"/s/{self.study.slug}/"
        query = self.query
        if self.test:
            token = f"{preview.PARAM}={preview.preview_token(self.study)}"
            query = f"{query}&{token}" if query else f"?{token}"
        r = self.client.get(link + query)
        if r.status_code != 200:
            raise BotError(f"start link: HTTP {r.status_code}")
        hidden = {
            name: html.unescape(value)
            for name, value in _HIDDEN.findall(r.content.decode())
            if name != "csrfmiddlewaretoken"
        }
        r = self.client.post(link, hidden)
        if r.status_code != 302:
            raise BotError(f"start button: HTTP {r.status_code}")
        return r["Location"]

    #: pages at which the bot leaves, the page its outcome (delayed release: until the release)
    leaves_at: tuple[str, ...] = ("under_review",)

    def run(self) -> BotResult:
        url = self._arrive()
        return self._walk(url, BotResult(code=url.rstrip("/").rsplit("/", 1)[-1]))

    def _walk(self, url: str, result: BotResult) -> BotResult:
        """The pages from `url` on, answered, up to an end page or one of `leaves_at`."""
        for _ in range(200):
            body = self._get(url)
            m = _PAGE.search(body)
            if m is None:  # a page without a form: waiting or an end page
                if 'id="progress"' in body:
                    result.pages.append("waiting")
                    result.wait_seconds = self._wait(url)
                    continue
                code = _CODE.search(body)
                if code is None:
                    raise BotError(f"{url}: a page with neither a form nor an end code")
                result.outcome = _OUTCOMES[code.group(1)]
                result.completion_code = html.unescape(code.group(2)).strip()
                return result
            page = html.unescape(m.group(1))
            result.pages.append(page)
            if page in self.leaves_at:
                result.outcome = page
                return result
            if page == "decision":  # Continue opens once the plans are ready, as its script does
                result.wait_seconds = self._read_decision(url)
            self._post(url, self._answers(page, body))
            if page.startswith("evaluation-"):
                result.evaluations += 1
        raise BotError("the flow did not end after 200 pages")

    def _answers(self, page: str, body: str) -> dict[str, Any]:
        data: dict[str, Any] = {"page": page}
        for check in attention.checks_for_page(self.study, page):
            q = attention_question(check)
            answer = question_answer(q, self.rng, self.attention_error_rate)
            data[f"{attention.FIELD_PREFIX}{check['key']}"] = answer
        if page == "screening":
            answers = (
                _eligible_answers(self.questions, self.rng, self.person)
                if self.eligible
                else _ineligible_answers(self.questions, self.rng)
            )
            data.update(pool_collection_answers(self.study, answers, self.rng))
            data.update(self.overrides)
            for q in self.questions:
                question = screening.as_question(q)
                self.given[f"screening.{q['key']}"] = stored(question, data.get(q["key"]))
        elif page == "consent":
            data.update({"agree": "on"} if self.consent else {"decision": "decline"})
        elif page in questionnaire.PAGE_OF_STATE:
            data.update(self._items(questionnaire.PAGE_OF_STATE[page], body))
        elif page == "profile":
            profile = _profile_answers(self.schema, self.rng, self.person)
            self.given.update({f"profile.{k}": float(v) for k, v in profile.items()})
            data.update(profile)
        elif page.startswith("evaluation-"):
            recourse = _RECOURSE.search(body)
            if recourse is None:
                raise BotError(f"{page}: no recourse field")
            changed = sorted(set(_IMPOSSIBLE.findall(body)))
            sparsity = len(_CHANGED_ROWS.findall(body))
            data["recourse"] = recourse.group(1)
            data["acceptance"] = _rating(self.rng, sparsity)
            data["acceptance_why"] = "simulated answer"
            data["action"] = _rating(self.rng, sparsity)
            data["action_why"] = "simulated answer"
            for key in changed:
                data[f"impossible_{key}"] = "yes" if self.rng.random() < 0.05 else "no"
            data.update(self._items("evaluation", body))
        return data

    def _items(self, where: str, body: str) -> dict[str, Any]:
        """Answers to the study's own items the page shows (`where`: pre, post or
        evaluation), past its screener or ended by it (`end_at_screener`)."""
        on_page = set(_ITEM.findall(body))
        items = [q for q in questionnaire.items_for(self.study, where) if q.key in on_page]
        answers = {q.key: question_answer(q, self.rng, self.attention_error_rate) for q in items}
        try:
            answers = screened(
                items,
                answers,
                self.given,
                end=self.end_at_screener,
                draw=lambda q: question_answer(q, self.rng, self.attention_error_rate),
            )
        except ScreenerError as exc:
            raise BotError(f"{where} page: {exc}") from None
        out = {}
        for q in items:
            answer = answers[q.key]
            if where != "evaluation":  # a plan page's answers are per plan: named by nothing
                self.given[f"q.{q.key}"] = stored(q, answer)
            if answer not in ("", []):
                out.update(posted(f"{QUESTION_PREFIX}{q.key}", answer))
        return out

    def _read_decision(self, url: str) -> float:
        """Stay on the decision page until its Continue opens: the plans are ready and the
        study's minimum time on the page has passed. Returns the seconds waited."""
        t0 = time.monotonic()
        waited = self._wait(url)
        minimum = float((self.study.page_min_seconds or {}).get("decision", 0) or 0)
        left = minimum - (time.monotonic() - t0) + 0.2  # the server counts from its own clock
        if minimum and left > 0:
            time.sleep(left)
        return max(waited, time.monotonic() - t0)

    def _wait(self, url: str) -> float:
        status_url = url.rstrip("/") + "/status"
        t0 = time.monotonic()
        while time.monotonic() - t0 < self.wait_timeout:
            r = self.client.get(status_url)
            if r.status_code == 200 and r.json().get("ready"):
                return time.monotonic() - t0
            time.sleep(self.poll_seconds)
        raise BotError(
            f"recourses not ready after {self.wait_timeout:g}s: is a Celery worker running?"
        )
