"""Issue 34 in headless Debian Chromium against gunicorn and a real Celery worker (embedded
default): one participant of a 2-wave study (frozen model) is rejected in wave 1, rates the
plan, says they will follow it, leaves with their link; the schedule, run as 8 days later,
opens wave 2; back by link they report the plan's values, read from the page's reminders
("Your plan: ..."), as their changes (the plan is a profile the frozen model approves, so
implemented fully it is approved) and end on the approved page with its code; the changes
page fits a phone. A phone-width screenshot of the changes page is kept
(`WAVES_SCREENSHOT`, default the test's folder). The export has both waves and the changes.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest

from tests.browser.pages import Page, at
from tests.browser.phone_layout import phone_problems
from tests.integration.stack import embedded_env, manage, migrate, running

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SETUP = """
from studyapp.models import Study
from studyapp.studies import services, updates
Study.objects.filter(slug="trained").update(state="draft")
s = updates.study_update(study=Study.objects.get(slug="trained"), changes=dict(
    kind="multi_wave", waves=dict(count=2, schedule=[dict(after_days=7)])))
services.study_set_state(study=s, state="live", acknowledged=["all"])
print("APPROVED=" + Study.objects.get(slug="trained").outcome_codes["approved"]["code"])
"""


def _rate_plan(page: Page, browser: object) -> None:
    """Rate the wave's one plan (evaluation-1) and go on to the follow page."""
    page.on("evaluation-1")
    page.choose("acceptance", "5")
    page.css('textarea[name="acceptance_why"]').send_keys("ok")
    for radio in browser.find_elements("css selector", 'input[name^="impossible_"][value="no"]'):
        radio.click()
    page.choose("action", "6")
    page.css('textarea[name="action_why"]').send_keys("I will do it")
    page.submit(at("wave_follow"))


def test_two_waves_reported_changes_approved_in_chromium(driver, tmp_path: Path) -> None:  # noqa: ANN001
    from selenium.webdriver.support.ui import Select

    env = embedded_env(tmp_path)
    migrate(env)
    manage(env, "create_demo_study", "--no-admin", "--slug", "trained", "--design",
           "proximate:1", "--pool-size", "400")  # fmt: skip
    printed = manage(env, "shell", "-c", SETUP)
    approved_code = next(x for x in printed.split() if x.startswith("APPROVED="))[9:]
    page = Page(driver)
    with running(env, tmp_path) as url:
        # wave 1: every item "1" is rejected; the one plan is rated and chosen
        page.start(f"{url}/s/trained/?PROLIFIC_PID=waves-1")
        page.to_decision()
        assert page.css("#rejection").text
        page.continue_decision(at("evaluation-1"))
        _rate_plan(page, driver)
        plan = page.css('input[name="followed"]:not([value="none"])')
        plan.click()
        page.submit(at("wave_away"))
        link = page.css("#return-link-own").get_attribute("href")
        assert "round 2" in page.css("#wave-away").text
        # not open yet: the link shows the same page
        page.go(link, at("wave_away"))
        # the schedule, run as 8 days later, opens wave 2
        later = (datetime.now(UTC) + timedelta(days=8)).isoformat()
        out = manage(env, "release_due", "--now", later).splitlines()
        assert any(line.startswith("waves_opened: 1 (") for line in out), out
        page.go(link, at("wave_changes"))
        # report the followed plan's values as the page reminds of them ("Your plan: ...",
        # the description of each item it changes), the rest "no change"
        planned = driver.find_elements("css selector", "select[aria-describedby]")
        assert planned, "the plan changes at least one item"
        for select in planned:
            reminder = driver.find_element("id", select.get_attribute("aria-describedby"))
            assert reminder.text.startswith("Your plan: ")
            assert Select(select).first_selected_option.get_attribute("value") == ""
            Select(select).select_by_visible_text(reminder.find_element("tag name", "strong").text)
        assert phone_problems(driver) == []
        shot = Path(os.environ.get("WAVES_SCREENSHOT", tmp_path / "waves_changes.png"))
        driver.save_screenshot(str(shot))
        assert shot.stat().st_size > 0
        code = page.submit("#approved-code")
        assert code.text == approved_code
    out_dir = tmp_path / "export"
    manage(env, "export_study", "trained", "--out", str(out_dir))
    waves = pd.read_csv(out_dir / "waves.csv", keep_default_na=False)
    assert list(waves["wave"]) == [1, 2]
    assert list(waves["decision"]) == ["rejected", "approved"]
    assert waves["followed_recourse"].iloc[0] != "" and waves["model_policy"].eq("frozen").all()
    assert waves["model_hash"].iloc[0] == waves["model_hash"].iloc[1]  # frozen
    changes = pd.read_csv(out_dir / "changes.csv", keep_default_na=False)
    followed = changes[changes["planned"] != ""]
    assert len(followed) == len(planned) and (followed["changed"] == 1).all()
    assert (followed["after"].astype(float) == followed["planned"].astype(float)).all()
    assert (changes[changes["planned"] == ""]["changed"] == 0).all()
