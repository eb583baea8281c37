"""A client of Prolific's REST API (https://docs.prolific.com/api-reference): the few
endpoints the study platform needs, over `requests`, with retries.

Retries: a network error, a time-out, 429 (after its `Retry-After`, in seconds or as an HTTP
date) and 5xx are tried again with exponential backoff, up to `retries` times. A request that
is not safe to repeat (paying bonuses: Prolific documents `/bulk-bonus-payments/{id}/pay/` as
not idempotent) is repeated only when Prolific certainly did not act on it — it could not be
connected to, or it answered 429 — never after a time-out or a 5xx, where the payment may have
gone through; the caller then says so instead of paying twice. Other 4xx answers are Prolific's
refusal and end the call with its message.

The token goes only to the API's own host: a pagination link to any other host is refused.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests
from urllib3.exceptions import NewConnectionError

from studyapp.panel.errors import PanelError
from studyapp.panel_models import PROLIFIC_API

#: rejection categories Prolific accepts with a REJECT transition
REJECTION_CATEGORIES = (
    "TOO_QUICKLY", "TOO_SLOWLY", "FAILED_INSTRUCTIONS", "INCOMP_LONGITUDINAL", "FAILED_CHECK",
    "LOW_EFFORT", "MALINGERING", "NO_CODE", "BAD_CODE", "NO_DATA", "UNSUPP_DEVICE", "OTHER",
)  # fmt: skip
#: Prolific's minimum length of a rejection message
REJECT_MESSAGE_MIN = 100
#: the longest a Retry-After is waited for (a longer one fails the call, saying so)
MAX_RETRY_AFTER_S = 120.0


class Uncertain(PanelError):
    """A request that is not safe to repeat got no clear answer (a time-out or a 5xx): Prolific
    may or may not have acted on it."""


@dataclass
class Outcome:
    """A call's answer and how many HTTP requests it took."""

    data: Any
    attempts: int


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def error_text(response: requests.Response) -> str:
    """Prolific's error body (`{"error": {"status", "title", "detail", ...}}`, or DRF's
    `{"detail": ...}`) as one line."""
    try:
        body = response.json()
    except ValueError:
        return (response.text or response.reason or "").strip()[:300]
    err = body.get("error", body) if isinstance(body, dict) else body
    detail = err.get("detail", err.get("title", "")) if isinstance(err, dict) else err

    def flat(x: Any) -> str:
        if isinstance(x, dict):
            return "; ".join(f"{k}: {flat(v)}" for k, v in x.items())
        if isinstance(x, list):
            return "; ".join(flat(v) for v in x)
        return str(x)

    return flat(detail)[:500]


def _never_sent(exc: requests.RequestException) -> bool:
    """Whether the request certainly never reached Prolific: the connection was refused or
    could not be opened in time (a reset or a read time-out may come after it arrived)."""
    if isinstance(exc, requests.ConnectTimeout):
        return True
    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    return isinstance(exc, requests.ConnectionError) and isinstance(reason, NewConnectionError)


class ProlificClient:
    """One researcher's token against one API address."""

    def __init__(
        self,
        token: str,
        base_url: str = PROLIFIC_API,
        *,
        timeout: float = 30.0,
        retries: int = 5,
        backoff: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = base_url.rstrip("/") + "/"
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.sleep = sleep
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Token {token}"
        self.session.headers["Accept"] = "application/json"

    def close(self) -> None:
        self.session.close()

    def _url(self, path_or_url: str) -> str:
        url = urljoin(self.base_url, path_or_url)
        if urlsplit(url).netloc != urlsplit(self.base_url).netloc:
            raise PanelError(f"refused to send the token to another host: {url}")
        return url

    def call(
        self, method: str, path: str, *, json: Any = None, params: Any = None, safe: bool = True
    ) -> Outcome:
        """One API call with its retries. `safe`: repeating it cannot act twice."""
        url = self._url(path)
        where = f"{method} {urlsplit(url).path}"
        attempt = 0
        while True:
            attempt += 1
            last = attempt > self.retries
            try:
                r = self.session.request(
                    method, url, json=json, params=params, timeout=self.timeout
                )
            except requests.RequestException as exc:
                unsent = _never_sent(exc)
                if last or not (safe or unsent):
                    why = "could not be reached" if unsent else "gave no answer"
                    raise (PanelError if unsent else Uncertain)(
                        f"{where}: Prolific {why} after {attempt} attempt(s) "
                        f"({type(exc).__name__})"
                        + ("" if safe or unsent else "; it may have acted on it")
                    ) from exc
                self.sleep(self.backoff * 2 ** (attempt - 1))
                continue
            if r.status_code == 429:
                wait = _retry_after(r.headers.get("Retry-After"))
                wait = self.backoff * 2 ** (attempt - 1) if wait is None else wait
                if last or wait > MAX_RETRY_AFTER_S:
                    raise PanelError(
                        f"{where}: Prolific is limiting requests (HTTP 429, retry after "
                        f"{wait:g} s) after {attempt} attempt(s)"
                    )
                self.sleep(wait)
                continue
            if r.status_code >= 500:
                if last or not safe:
                    raise Uncertain(
                        f"{where}: Prolific failed (HTTP {r.status_code}) after {attempt} "
                        "attempt(s)" + ("" if safe else "; it may have acted on it")
                    )
                self.sleep(self.backoff * 2 ** (attempt - 1))
                continue
            if r.status_code >= 400:
                raise PanelError(f"{where}: HTTP {r.status_code}: {error_text(r)}")
            if not r.content:
                return Outcome(None, attempt)
            try:
                return Outcome(r.json(), attempt)
            except ValueError:
                return Outcome(r.text, attempt)

    # the endpoints ---------------------------------------------------------------------

    def me(self) -> dict[str, Any]:
        return self.call("GET", "api/v1/users/me/").data

    def study(self, study_id: str) -> dict[str, Any]:
        return self.call("GET", f"api/v1/studies/{study_id}/").data

    def update_study(self, study_id: str, changes: dict[str, Any]) -> dict[str, Any]:
        return self.call("PATCH", f"api/v1/studies/{study_id}/", json=changes).data

    def iter_submissions(self, study_id: str, page_size: int = 200) -> Iterator[dict[str, Any]]:
        """Every submission of a study, following the `_links.next.href` pages."""
        next_url: str | None = f"api/v1/studies/{study_id}/submissions/"
        params: dict[str, Any] | None = {"page_size": page_size}
        seen = 0
        while next_url:
            page = self.call("GET", next_url, params=params).data or {}
            params = None  # the next link carries its own query
            results = page.get("results", [])
            yield from results
            seen += len(results)
            nxt = (page.get("_links") or {}).get("next") or {}
            next_url = nxt.get("href") if isinstance(nxt, dict) else nxt
            if seen > 1_000_000:
                raise PanelError("more than a million submissions: the pages do not end")

    def transition(self, submission_id: str, body: dict[str, Any]) -> Outcome:
        """Prolific documents the transition as idempotent (a repeat is ignored)."""
        return self.call("POST", f"api/v1/submissions/{submission_id}/transition/", json=body)

    def bulk_approve(self, submission_ids: list[str]) -> Outcome:
        """Approving an approved submission changes nothing, so a repeat is harmless."""
        body = {"submission_ids": submission_ids}
        return self.call("POST", "api/v1/submissions/bulk-approve/", json=body)

    def request_return(self, submission_id: str, reasons: list[str]) -> Outcome:
        body = {"request_return_reasons": reasons}
        return self.call("POST", f"api/v1/submissions/{submission_id}/request-return/", json=body)

    def setup_bonuses(self, study_id: str, rows: list[tuple[str, str]]) -> Outcome:
        """Sets up (does not pay) a bulk bonus: `rows` are (participant id, amount)."""
        csv = "\n".join(f"{pid},{amount}" for pid, amount in rows)
        body = {"study_id": study_id, "csv_bonuses": csv}
        return self.call("POST", "api/v1/submissions/bonus-payments/", json=body)

    def pay_bonuses(self, bulk_id: str) -> Outcome:
        """Not idempotent on Prolific's side: never repeated once it may have arrived."""
        return self.call("POST", f"api/v1/bulk-bonus-payments/{bulk_id}/pay/", json={}, safe=False)
