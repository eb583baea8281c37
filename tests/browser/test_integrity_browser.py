"""The integrity signals in headless Debian Chromium, against gunicorn and a real Celery
worker: on a study with them on, the consent page says so, and a paste into a "why" field
(Ctrl+C in one field, Ctrl+V in the other: a real paste) and a switch to another tab and
back on a plan's page are recorded by the page script, sent with the page's submit, and
reach the export; on a study with them off the page carries no script and nothing is
recorded."""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import pytest

from tests.browser.pages import Page, at
from tests.integration.stack import embedded_env, manage, migrate, running

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SETUP = """
from studyapp.models import Study
Study.objects.filter(slug="signals").update(integrity_signals=True)
"""
COUNT = """
from studyapp.models import IntegrityRecord
print("RECORDS=%d" % IntegrityRecord.objects.filter(participant__study__slug="{slug}").count())
"""
WHY = "The plan asks for a new job, which I cannot get soon."


def _answer_plan(page: Page, driver) -> None:  # noqa: ANN001
    """Rate the plan, type one reason and paste it into the other, switch tabs and back."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    page.choose("acceptance", "4")
    for radio in driver.find_elements(By.CSS_SELECTOR, 'input[name^="impossible_"]'):
        if radio.get_attribute("value") == "no":
            radio.click()
    page.choose("action", "3")
    typed = page.css('textarea[name="action_why"]')
    typed.send_keys(WHY)
    typed.send_keys(Keys.CONTROL, "a")
    typed.send_keys(Keys.CONTROL, "c")
    pasted = page.css('textarea[name="acceptance_why"]')
    pasted.click()
    pasted.send_keys(Keys.CONTROL, "v")
    assert pasted.get_attribute("value") == WHY
    plan = driver.current_window_handle
    driver.switch_to.new_window("tab")  # the plan's tab is hidden meanwhile
    time.sleep(0.5)
    driver.close()
    driver.switch_to.window(plan)
    time.sleep(0.5)


def test_a_paste_and_a_tab_switch_reach_the_export_and_nothing_when_off(
    driver,
    tmp_path: Path,  # noqa: ANN001
) -> None:
    env = embedded_env(tmp_path)
    migrate(env)
    for slug in ("signals", "quiet"):
        manage(env, "create_demo_study", "--no-admin", "--slug", slug, "--design",
               "proximate:1", "--pool-size", "400")  # fmt: skip
    manage(env, "shell", "-c", SETUP)
    page = Page(driver)
    with running(env, tmp_path) as url:
        for slug, on in (("signals", True), ("quiet", False)):
            page.start(f"{url}/s/{slug}/?PROLIFIC_PID={slug}-1")
            assert ('id="integrity-notice"' in driver.page_source) is on
            page.to_waiting(at("evaluation-1"))
            assert ('name="integrity"' in driver.page_source) is on
            assert ("studyapp/integrity.js" in driver.page_source) is on
            _answer_plan(page, driver)
            page.submit("#completion-code")
    counts = {
        slug: int(
            manage(env, "shell", "-c", COUNT.format(slug=slug)).split("RECORDS=")[1].split()[0]
        )
        for slug in ("signals", "quiet")
    }
    assert counts == {"signals": 1, "quiet": 0}
    out = tmp_path / "export"
    manage(env, "export_study", "signals", "--out", str(out))
    fields = pd.read_csv(out / "integrity_fields.csv")
    why = fields[(fields["page"] == "evaluation-1") & (fields["field"] == "acceptance_why")]
    assert why["pastes"].tolist() == [1] and why["pasted_chars"].tolist() == [len(WHY)]
    typed = fields[fields["field"] == "action_why"].iloc[0]
    assert typed["pastes"] == 0 and typed["inputs"] >= len(WHY) and typed["typing_seconds"] > 0
    assert fields[fields["field"] == "acceptance"]["first_seconds"].iloc[0] > 0
    pages = pd.read_csv(out / "integrity_pages.csv")
    assert pages["tab_hidden"].tolist() == [1] and pages["window_blurs"].iloc[0] >= 1
    summary = pd.read_csv(out / "integrity.csv", keep_default_na=False)
    assert summary["signals"].tolist() == ["pasted"] and summary["tab_hidden"].tolist() == [1]
    quiet = tmp_path / "quiet"
    manage(env, "export_study", "quiet", "--out", str(quiet))
    assert not list(quiet.glob("integrity*"))
