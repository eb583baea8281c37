"""Participant URLs skip sessions, users and version authorship
(`config.participant_middleware`), and keep what protects them: the CSRF check, the security
headers and clickjacking protection, their flash messages across Post/Redirect/Get (now in a
signed cookie), their identity (the code in the URL). The console and the admin keep
sessions, login and django-axes' lockout (`tests/studyapp/console/test_login_throttle.py`
tests the lockout itself)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.sessions.middleware import SessionMiddleware
from django.test import Client

from studyapp.config import participant_middleware as pm
from studyapp.models import Participant, Study
from tests.studyapp.conftest import start
from tests.studyapp.console.conftest import PASSWORD, researcher

_TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def test_a_post_without_the_form_token_is_refused(study: Study) -> None:
    """The CSRF check still runs on participant URLs: the study link's start button and a
    page's submit, without the token, are refused with the study's own page (403) and
    nothing is stored; with the token the same submit goes through."""
    browser = Client(enforce_csrf_checks=True)
    r = browser.get(f"/s/{study.slug}/")
    assert r.status_code == 200 and "csrftoken" in r.cookies
    hidden = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', r.text))
    token = hidden.pop("csrfmiddlewaretoken")
    refused = browser.post(f"/s/{study.slug}/", hidden)
    assert refused.status_code == 403 and 'id="resume"' in refused.text
    assert not Participant.objects.filter(study=study).exists()
    r = browser.post(f"/s/{study.slug}/", {**hidden, "csrfmiddlewaretoken": token})
    assert r.status_code == 302
    url = r["Location"]
    page = browser.get(url)
    assert browser.post(url, {"page": "consent", "agree": "on"}).status_code == 403
    assert Participant.objects.get(study=study).state == "consent"  # nothing stored
    token = _TOKEN.search(page.text).group(1)  # type: ignore[union-attr]
    r = browser.post(url, {"page": "consent", "agree": "on", "csrfmiddlewaretoken": token})
    assert r.status_code == 302 and Participant.objects.get(study=study).state != "consent"


def test_headers_and_no_session_on_participant_pages(study: Study) -> None:
    """A participant page still has the security headers, X-Frame-Options and no-cache; its
    request carries no session and no user, and it sets no session cookie."""
    client = Client()
    walker = start(client, study)
    for url in (f"/s/{study.slug}/", walker.url, walker.url + "status"):
        r = client.get(url)
        assert r.status_code == 200, url
        assert r["X-Frame-Options"] == "DENY", url
        assert r["X-Content-Type-Options"] == "nosniff", url
        assert r["Referrer-Policy"] == "same-origin", url
        assert r["Cross-Origin-Opener-Policy"] == "same-origin", url
        assert "no-cache" in r["Cache-Control"], url
        assert not hasattr(r.wsgi_request, "session"), url
        assert not hasattr(r.wsgi_request, "user"), url
        assert "sessionid" not in r.cookies, url


def test_a_flash_message_survives_the_redirect_without_a_session(study: Study) -> None:
    """A submit of a page already left is answered by a redirect and a warning, which the
    next GET shows once: the message travels in the `messages` cookie."""
    client = Client()
    walker = start(client, study)
    assert walker.consent().status_code == 302
    r = walker.post({"page": "consent", "agree": "on"})  # the back button, then submit
    assert r.status_code == 302 and r["Location"] == walker.url
    assert "messages" in r.cookies
    shown = walker.get().text
    assert "That page was already submitted" in shown
    assert "That page was already submitted" not in walker.get().text  # shown once


def test_the_console_and_admin_keep_sessions_and_login(study: Study) -> None:
    """Outside the participant URLs the session, the user and the session-backed messages
    are there as before: a researcher logs in, stays logged in, and is refused when not."""
    researcher("owner", superuser=True)  # may open every study
    monitor = f"/console/studies/{study.slug}/monitor/"
    r = Client().get(monitor)
    assert r.status_code == 302 and "login" in r["Location"]
    client = Client()
    r = client.post("/admin/login/?next=/admin/", {"username": "owner", "password": PASSWORD})
    assert r.status_code == 302 and "sessionid" in r.cookies
    r = client.get(monitor)
    assert r.status_code == 200
    assert r.wsgi_request.user.username == "owner"
    assert r.wsgi_request.session.get("_auth_user_id")
    assert r["X-Frame-Options"] == "DENY"
    # the same logged-in browser on a participant page: no session read, no user made
    walker = start(client, study)
    r = walker.get()
    assert r.status_code == 200 and not hasattr(r.wsgi_request, "user")


def test_a_middleware_with_a_view_hook_cannot_be_skipped() -> None:
    """Skipping a middleware's call would not skip its process_view, which Django calls
    separately: such a middleware is refused when the class is made."""

    class WithHook:
        def __init__(self, get_response: Any) -> None:
            self.get_response = get_response

        def process_view(self, *args: Any) -> None:
            return None

    with pytest.raises(TypeError, match="process_view"):
        type("Skipped", (pm._SkippedForParticipants, WithHook), {})
    assert issubclass(pm.SessionMiddleware, SessionMiddleware)  # admin.E410 finds it
    assert pm.is_participant_path("/p/abc/") and pm.is_participant_path("/s/carloan/")
    assert not pm.is_participant_path("/console/") and not pm.is_participant_path("/admin/")
