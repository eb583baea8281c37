"""Login throttling (django-axes): after STUDYAPP_LOGIN_FAILURES failed logins from one
address for one username, that pair is locked out for the cool-off, on the admin's login
page and on the API's token endpoint alike, with a message saying why and for how long."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from axes.models import AccessAttempt
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from tests.studyapp.console.conftest import PASSWORD, researcher

ROOT = Path(__file__).resolve().parents[3]
LOGIN = "/admin/login/?next=/admin/"


@pytest.fixture
def owner(db: Any) -> Any:
    cache.clear()  # the token endpoint's DRF throttle counts live in the cache
    yield researcher("owner")
    cache.clear()


def _login(password: str, *, address: str = "10.0.0.1", username: str = "owner", **meta: str):
    client = Client(REMOTE_ADDR=address, **meta)
    response = client.post(LOGIN, {"username": username, "password": password})
    return client, response


def _logged_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def _fail(n: int, **kw: Any) -> None:
    for _ in range(n):
        client, r = _login("wrong password", **kw)
        assert r.status_code == 200 and not _logged_in(client)


def _lock(limit: int, **kw: Any) -> None:
    """`limit` failures: the last one is answered with the lockout."""
    _fail(limit - 1, **kw)
    client, r = _login("wrong password", **kw)
    assert r.status_code == 429 and not _logged_in(client)


def test_locked_out_after_the_failure_limit(owner: Any, settings: Any) -> None:
    limit = settings.AXES_FAILURE_LIMIT
    assert limit == 5  # the documented default
    _fail(limit - 1)
    client, r = _login(PASSWORD)  # the last try before the limit still gets in
    assert r.status_code == 302 and _logged_in(client)
    _lock(limit)  # a success reset the count: `limit` new failures lock
    client, r = _login(PASSWORD)
    assert r.status_code == 429 and not _logged_in(client)
    page = r.content.decode()
    assert "Too many failed logins (5)" in page and "Try again in 15 minute(s)" in page
    assert r["Retry-After"] == str(15 * 60)
    # the lock is for this address and this username only
    client, r = _login(PASSWORD, address="10.0.0.2")
    assert r.status_code == 302 and _logged_in(client)
    other = researcher("other")
    client, r = _login(PASSWORD, username=other.username)
    assert r.status_code == 302 and _logged_in(client)


def test_the_lock_ends_after_the_cool_off(owner: Any, settings: Any) -> None:
    _lock(settings.AXES_FAILURE_LIMIT)
    assert _login(PASSWORD)[1].status_code == 429
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))
    client, r = _login(PASSWORD)
    assert r.status_code == 302 and _logged_in(client)


def test_the_limit_is_a_setting(owner: Any, settings: Any) -> None:
    settings.AXES_FAILURE_LIMIT = 2
    _lock(2)
    _, r = _login(PASSWORD)
    assert r.status_code == 429 and "Too many failed logins (2)" in r.content.decode()


def test_token_endpoint_locks_out_too(owner: Any, settings: Any) -> None:
    api = Client(REMOTE_ADDR="10.0.0.3")
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        r = api.post("/api/token/", {"username": "owner", "password": "nope"})
        assert r.status_code == 400
    r = api.post("/api/token/", {"username": "owner", "password": "nope"})
    assert r.status_code == 429
    r = api.post("/api/token/", {"username": "owner", "password": PASSWORD})
    assert r.status_code == 429 and "token" not in r.json()
    assert "Too many failed logins" in r.json()["detail"] and r["Retry-After"] == "900"


def test_behind_a_proxy_the_client_is_the_address_the_proxy_saw(owner: Any, settings: Any) -> None:
    """With DJANGO_PROXY_COUNT=1 the address is the right-most X-Forwarded-For entry (the
    one our proxy appended): a client changing what it sends in the header does not escape."""
    settings.AXES_IPWARE_PROXY_COUNT = 1
    settings.AXES_IPWARE_META_PRECEDENCE_ORDER = ("HTTP_X_FORWARDED_FOR", "REMOTE_ADDR")
    for i in range(settings.AXES_FAILURE_LIMIT - 1):
        forwarded = f"192.0.2.{i}, 198.51.100.7"  # a forged entry, then the real client
        _fail(1, address="10.9.9.9", HTTP_X_FORWARDED_FOR=forwarded)
    forwarded = "192.0.2.98, 198.51.100.7"
    _, r = _login("wrong", address="10.9.9.9", HTTP_X_FORWARDED_FOR=forwarded)
    assert r.status_code == 429  # all counted as one client
    forwarded = "192.0.2.99, 198.51.100.7"
    _, r = _login(PASSWORD, address="10.9.9.9", HTTP_X_FORWARDED_FOR=forwarded)
    assert r.status_code == 429
    # another client behind the same proxy is not locked
    client, r = _login(PASSWORD, address="10.9.9.9", HTTP_X_FORWARDED_FOR="203.0.113.5")
    assert r.status_code == 302 and _logged_in(client)


def test_environment_sets_limit_and_cool_off(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "STUDYAPP_VAR_DIR": str(tmp_path),
        "DJANGO_SETTINGS_MODULE": "studyapp.config.settings",
        "STUDYAPP_LOGIN_FAILURES": "3",
        "STUDYAPP_LOGIN_COOLOFF_MINUTES": "45",
        "DJANGO_PROXY_COUNT": "1",
    }
    code = (
        "import django, json; django.setup(); from django.conf import settings as s;"
        "from axes.helpers import get_cool_off;"
        "print(json.dumps([s.AXES_FAILURE_LIMIT, get_cool_off().total_seconds(),"
        " s.AXES_IPWARE_PROXY_COUNT, s.REST_FRAMEWORK['NUM_PROXIES']]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [3, 45 * 60, 1, 1]
