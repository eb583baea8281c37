"""Database queries per participant page: a bound for each page type, counted by hand from
the code (each comment lists them), and no participant request reads the study's pool or
uploaded model. A change that adds a query to a page, or reads the pool again, fails here.

The counts are for the test database (SQLite): a transaction shows as its own BEGIN and
COMMIT statements; on PostgreSQL those two are not statements and the counts are lower.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.sessions.middleware import SessionMiddleware
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from studyapp.generation.services import recourses_generate
from studyapp.models import Participant, Study
from studyapp.participation import study_cache
from studyapp.participation.study_cache import STUDY_LARGE
from studyapp.prereg.history import ActorMiddleware
from tests.studyapp.conftest import ELIGIBLE, PROFILE, Walker, start
from tests.studyapp.console.conftest import researcher

#: participant_get: the participant with their profile and their study's version (the
#: study itself comes from the process's cache, `participation.study_cache`)
GET = 1
#: a first view records the visit: one INSERT ... ON CONFLICT DO UPDATE (no transaction)
FIRST_VIEW = 1
#: a reload: the same statement, which counts the view
RELOAD = 1
#: a submit: BEGIN, the participant's row locked and re-read, UPDATE participant, UPDATE
#: the page's visit (left), COMMIT
STEP = 5


def _requests(run: Callable[[], Any]) -> tuple[Any, list[str]]:
    with CaptureQueriesContext(connection) as ctx:
        response = run()
    return response, [q["sql"] for q in ctx.captured_queries]


def _in_transaction(sql: list[str]) -> list[str]:
    """The statements between BEGIN and COMMIT: on SQLite they hold the writer lock."""
    begin = next(i for i, s in enumerate(sql) if s.startswith("BEGIN"))
    end = next(i for i, s in enumerate(sql) if s.startswith("COMMIT"))
    return sql[begin + 1 : end]


def _check(run: Callable[[], Any], most: int, what: str, *, writes_hold: int = 0) -> Any:
    """`writes_hold`: at most this many statements inside the submit's transaction."""
    response, sql = _requests(run)
    if writes_hold:
        held = _in_transaction(sql)
        assert len(held) <= writes_hold, f"{what} holds the writer for:\n" + "\n".join(held)
    assert response.status_code in (200, 302), (what, response.status_code)
    large = [s for s in sql if any(col in s for col in STUDY_LARGE)]
    assert not large, f"{what} reads a large study column: {large[0][:200]}"
    assert len(sql) <= most, f"{what}: {len(sql)} queries, at most {most}:\n" + "\n".join(sql)
    return response


def test_queries_per_page_type(study: Study) -> None:
    client = Client()
    study_cache.forget()
    # welcome: the live study's id and version by its slug, then, once per process and
    # version, the study itself (large columns deferred)
    _check(lambda: client.get(f"/s/{study.slug}/"), 2, "welcome, first in this process")
    _check(lambda: client.get(f"/s/{study.slug}/"), 1, "welcome")
    w = start(client, study)
    url = w.url
    # the screening also looks up the study's screening quotas
    for page, data, extra in (("consent", {"agree": "on"}, 0), ("screening", ELIGIBLE, 1)):
        _check(lambda: client.get(url), GET + FIRST_VIEW, f"{page} page")
        _check(lambda: client.get(url), GET + RELOAD, f"{page} page reloaded")
        post = {"page": page, **data}
        _check(lambda d=post: client.post(url, d), GET + STEP + extra, page)
    _check(lambda: client.get(url), GET + FIRST_VIEW, "scenario page")
    _check(lambda: client.post(url, {"page": "scenario"}), GET + STEP, "scenario")
    _check(lambda: client.get(url), GET + FIRST_VIEW, "profile page")
    # + INSERT profile (the built-in decision model needs no stored file)
    _check(lambda: client.post(url, {"page": "profile", **PROFILE}), GET + STEP + 1, "profile")
    # the waiting page's status poll: the participant only
    _check(lambda: client.get(url + "status"), GET, "status")
    who = Participant.objects.get(code=url.rstrip("/").rsplit("/", 1)[-1])
    assert recourses_generate(participant_id=who.pk, may_wait=False)  # the worker's part
    # the decision page (its profile read with the participant), and its Continue (no
    # minimum time on the page: its visit's entry time is not read)
    _check(lambda: client.get(url), GET + FIRST_VIEW, "decision page")
    _check(lambda: client.post(url, {"page": "decision"}), GET + STEP, "decision")
    walker = Walker(client, url)
    n_plans = who.recourses.count()
    assert n_plans > 1
    for i in range(n_plans):
        # + the plans with their evaluated flag, in one query
        _check(lambda: client.get(url), GET + 1 + FIRST_VIEW, f"plan {i + 1} page")
        data = walker.evaluation_data()
        # + the page's plans (the submit checks against them), the visit's entry time; then
        # the transaction: BEGIN, lock, UPDATE visit, INSERT evaluation (its unique plan
        # refuses one rated meanwhile: no read for that), UPDATE participant, COMMIT
        _check(lambda d=data: client.post(url, d), GET + 1 + 1 + 6, f"plan {i + 1}", writes_hold=4)
    # an end page: the participant only
    response = _check(lambda: client.get(url), GET, "completion page")
    assert b"completion-code" in response.content


@pytest.mark.parametrize("limit", [GET + FIRST_VIEW - 1])
def test_the_bound_is_tight_enough_to_fail(study: Study, limit: int) -> None:
    """One query fewer than the bound fails: the bounds are not loose."""
    client = Client()
    w = start(client, study)
    with pytest.raises(AssertionError, match="queries, at most"):
        _check(lambda: client.get(w.url), limit, "consent page")


def test_participant_requests_skip_the_console_middleware(
    study: Study, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The middleware a participant does not use (`config.participant_middleware`) does no
    work on their pages: a browser also logged in to the console (its session cookie sent)
    reads no session and no user on a participant page, its submit or the status poll, and
    the queries stay at the page's own; a console page runs them as before."""
    calls: list[str] = []

    def spy(cls: type, name: str) -> None:
        original = getattr(cls, name)

        def counted(self: Any, *args: Any) -> Any:
            calls.append(cls.__name__)
            return original(self, *args)

        monkeypatch.setattr(cls, name, counted)

    spy(SessionMiddleware, "process_request")
    spy(AuthenticationMiddleware, "process_request")
    spy(ActorMiddleware, "__call__")
    client = Client()
    client.force_login(researcher("owner", superuser=True))
    w = start(client, study)
    calls.clear()
    for run, most, what in (
        (lambda: client.get(w.url), GET + FIRST_VIEW, "consent page"),
        (lambda: client.post(w.url, {"page": "consent", "agree": "on"}), GET + STEP, "consent"),
        (lambda: client.get(w.url + "status"), GET, "status"),
        (lambda: client.get(f"/s/{study.slug}/"), 1, "welcome"),
    ):
        response, sql = _requests(run)
        assert response.status_code in (200, 302), what
        assert not [s for s in sql if "django_session" in s or "auth_user" in s], what
        assert len(sql) <= most, f"{what}: {len(sql)} queries, at most {most}"
    assert calls == []
    response, sql = _requests(lambda: client.get(f"/console/studies/{study.slug}/monitor/"))
    assert response.status_code == 200
    assert [s for s in sql if "django_session" in s] and [s for s in sql if "auth_user" in s]
    assert set(calls) == {"SessionMiddleware", "AuthenticationMiddleware", "ActorMiddleware"}
