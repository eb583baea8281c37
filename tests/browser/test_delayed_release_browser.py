"""Issue 17 in headless Debian Chromium against gunicorn and a real Celery worker on the
embedded default: a delayed-release participant submits, sees "under review" and gets their
link by e-mail, is released by the schedule (run as at a later time: a controlled clock),
returns with the link and completes; another returns after the deadline and gets the expiry
outcome with its own code. The export records submission, release and return times.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

import pandas as pd
import pytest

from tests.browser.pages import Page, at
from tests.browser.test_study_builder_browser import web, worker  # noqa: F401
from tests.integration.stack import embedded_env, manage, migrate

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DELAY = (
    "from studyapp.models import Study; from studyapp.studies.updates import study_update; "
    "s = Study.objects.get(slug='carloan'); "
    "study_update(study=s, changes=dict(release_mode='delayed', release_after_days=14,"
    " reminder_every_days=3, return_deadline_days=7)); "
    "print(s.outcome_codes['expired']['code'], s.outcome_codes['completed']['code'])"
)


def _at(days: float) -> str:
    return (datetime.now(UTC) + timedelta(days=days)).isoformat()


def _submit(page: Page, url: str, panel_id: str) -> str:
    """A participant up to the "under review" page; returns their return link."""
    page.start(f"{url}/s/carloan/?PROLIFIC_PID={panel_id}")
    page.to_waiting(at("under_review"))
    assert "under review" in page.css("#under-review").text
    return page.css("#return-link-own").get_attribute("href")


def _evaluate(page: Page, browser: object) -> str:
    """Rate the five plans; returns the completion code."""
    for n in range(1, 6):
        page.on(f"evaluation-{n}")
        page.choose("acceptance", "5")
        page.css('textarea[name="acceptance_why"]').send_keys("ok")
        for radio in browser.find_elements(
            "css selector", 'input[name^="impossible_"][value="no"]'
        ):
            radio.click()
        page.choose("action", "4")
        page.css('textarea[name="action_why"]').send_keys("ok")
        if n < 5:
            page.submit(at(f"evaluation-{n + 1}"))
    return page.submit("#completion-code").text


def test_release_return_complete_and_expire_in_chromium(driver, tmp_path: Path) -> None:  # noqa: ANN001, F811
    env = embedded_env(tmp_path)
    migrate(env)
    manage(env, "create_demo_study", "--no-admin", "--pool-size", "1000")
    expired_code, completed_code = manage(env, "shell", "-c", DELAY).splitlines()[-1].split()
    page = Page(driver)
    with web(env, tmp_path) as url, worker(env, tmp_path):
        # 1. submits, leaves an address: the link goes out by e-mail (console backend)
        link = _submit(page, url, "returner")
        page.css('input[name="email"]').send_keys("returner@example.org")
        assert "returner@example.org" in page.submit("#email-sent").text
        assert urlsplit(link).path in (tmp_path / "web.log").read_text()
        # 2. a second participant submits and leaves without an address
        late_link = _submit(page, url, "latecomer")
        # still held a day before the release is due, whatever the link
        assert "released: 0" in manage(env, "release_due", "--now", _at(13)).splitlines()
        page.go(link, at("under_review"))
        # 3. the schedule, run as 15 days later: both released, the notice e-mailed
        out = manage(env, "release_due", "--now", _at(15))
        assert any(line.startswith("released: 2 (") for line in out.splitlines())
        assert "returner@example.org" in out and urlsplit(link).path in out
        # 4. the first returns with the link: the report, then the plans, then completion
        page.go(link, at("report"))
        assert page.css("#report").text
        page.submit(at("evaluation-1"))
        assert _evaluate(page, driver) == completed_code
        # 5. the schedule as 23 days later (past the 7-day deadline): the second expires
        assert any(
            line.startswith("expired: 1 (")
            for line in manage(env, "release_due", "--now", _at(23)).splitlines()
        )
        assert page.go(late_link, "#expired-code").text == expired_code != completed_code
    manage(env, "export_study", "carloan", "--out", str(tmp_path / "export"))
    pa = pd.read_csv(tmp_path / "export" / "participants.csv", keep_default_na=False)
    assert list(pa["outcome"]) == ["completed", "expired"]
    assert all(pa["submitted_at"] != "") and all(pa["released_at"] != "")
    assert pa["returned_at"].iloc[0] != "" and pa["returned_at"].iloc[1] == ""
    released = pd.to_datetime(pa["released_at"], utc=True)
    submitted = pd.to_datetime(pa["submitted_at"], utc=True)
    assert ((released - submitted) > pd.Timedelta(days=14)).all()
    cb = pd.read_csv(tmp_path / "export" / "codebook.csv", keep_default_na=False)
    assert {"submitted_at", "released_at", "returned_at"} <= set(
        cb[cb["file"] == "participants.csv"]["column"]
    )
