"""A participant takes the study in headless Debian Chromium against gunicorn and a real
Celery worker on the embedded default (SQLite + SQLite-backed broker): screening to
completion code, with a reload in the middle, a double click on submit and the back button.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from recourse_engine import carloan_schema
from tests.browser.pages import Page, at
from tests.integration.stack import embedded_env, manage, migrate, prepare, running

pytestmark = [pytest.mark.browser, pytest.mark.slow]



def test_participant_completes_study_in_chromium(driver, tmp_path: Path) -> None:  # noqa: ANN001
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    page = Page(driver)

    def fill_evaluation(acceptance: str, action: str) -> None:
        page.choose("acceptance", acceptance)
        page.css('textarea[name="acceptance_why"]').send_keys("It makes sense to me.")
        for radio in driver.find_elements(By.CSS_SELECTOR, 'input[name^="impossible_"]'):
            if radio.get_attribute("value") == "no":
                radio.click()
        page.choose("action", action)
        page.css('textarea[name="action_why"]').send_keys("I could try.")

    env = embedded_env(tmp_path)
    prepare(env, pool_size=1000)
    with running(env, tmp_path) as url:
        page.go(f"{url}/s/carloan/?PROLIFIC_PID=browser-1", "#start")
        assert driver.find_elements(By.NAME, "page") == []  # the welcome page: no participant
        page.click_to("#start", at("consent"))  # consent first, before any screening answer
        assert 'id="withdraw-link"' in driver.page_source
        page.submit(at("consent"))  # without ticking the box: a clear message, still on consent
        assert "Please tick the box to agree" in driver.page_source
        page.css('input[name="agree"]').click()
        page.submit(at("screening"))
        page.css('input[name="age"]').send_keys("34")
        for name, value in [("gender", "1"), ("occupation", "1"), ("income", "3"),
                            ("car_purchase", "2"), ("loans", "8")]:  # fmt: skip
            page.choose(name, value)
        page.submit(at("scenario"))
        assert "two-year car loan" in driver.page_source
        page.submit(at("profile"))
        for item in carloan_schema().items:
            page.choose(item.key, "1")
        # the decision page: the rejection stays until Continue, which opens once the plans
        # are ready (its script polls; no reload loop)
        page.submit("#decision-continue")
        assert page.css("#rejection").text
        page.continue_decision(at("evaluation-1"))
        assert "&rarr;" in driver.page_source or "\u2192" in driver.page_source
        fill_evaluation("5", "3")
        page.submit(at("evaluation-2"))
        page.choose("acceptance", "2")
        page.act_to(driver.refresh, at("evaluation-2"))  # reload in the middle of a page
        fill_evaluation("2", "2")
        page.submit(at("evaluation-3"))
        fill_evaluation("6", "6")
        double_click = ActionChains(driver).double_click(page.css("button.next"))
        page.act_to(double_click.perform, at("evaluation-4"))
        fill_evaluation("4", "4")
        # a second submission of the same answers while the first is in flight (Chrome merges
        # a fast double click into one request, so this makes the duplicate certain)
        driver.execute_script(
            "const f = document.querySelector('form.page-form');"
            "fetch(location.href, {method: 'POST', body: new FormData(f),"
            " credentials: 'same-origin', redirect: 'manual'});"
        )
        page.submit(at("evaluation-5"))
        fill_evaluation("7", "1")
        code = page.submit("#completion-code").text
        assert code
        # the back button shows where the participant is, nothing else
        assert page.act_to(driver.back, "#completion-code").text == code
        manage(env, "export_study", "carloan", "--out", str(tmp_path / "export"))
    ev = pd.read_csv(tmp_path / "export" / "evaluations.csv")
    pa = pd.read_csv(tmp_path / "export" / "participants.csv")
    assert len(pa) == 1 and pa["outcome"].iloc[0] == "completed"
    posts = [line for line in (tmp_path / "web.log").read_text().splitlines() if '"POST ' in line]
    # consent (refused + agreed), screening, scenario, profile, 5 plans, the duplicate, and
    # the double click's second request when Chrome sent one
    assert len(posts) >= 11
    assert len(ev) == 5 and ev["recourse"].is_unique  # the double click stored one evaluation
    by_position = ev.set_index("position")
    assert list(by_position.loc[[1, 2, 3, 4, 5], "acceptance"]) == [5, 2, 6, 4, 7]
    assert list(by_position.loc[[1, 2, 3, 4, 5], "action"]) == [3, 2, 6, 4, 1]


def test_withdraw_in_a_japanese_study_in_chromium(driver, tmp_path: Path) -> None:  # noqa: ANN001
    """A participant of a Japanese study opens the link (a preview creates nothing), starts,
    agrees, answers the screening, then withdraws from the scenario page: confirmation, the
    withdrew code, and nothing of their answers left in the export."""
    from selenium.webdriver.common.by import By

    page = Page(driver)
    env = embedded_env(tmp_path)
    migrate(env)
    manage(env, "create_demo_study", "--no-admin", "--pool-size", "200", "--language", "ja")
    with running(env, tmp_path) as url:
        start = page.go(f"{url}/s/carloan/?PROLIFIC_PID=ja-browser", "#start")
        assert driver.find_element(By.TAG_NAME, "html").get_attribute("lang") == "ja"
        assert start.text == "調査を始める"
        page.click_to(start, 'input[name="agree"]').click()
        page.submit('input[name="age"]')
        assert "あなたの性別を教えてください。" in driver.page_source
        page.css('input[name="age"]').send_keys("41")
        for name, value in [("gender", "2"), ("occupation", "1"), ("income", "4"),
                            ("car_purchase", "1"), ("loans", "8")]:  # fmt: skip
            page.choose(name, value)
        page.submit(at("scenario"))
        link = page.css("#withdraw-link")
        assert link.text == "調査への参加をやめる"
        page.click_to(link, "#confirm-withdraw")
        code = page.click_to("#confirm-withdraw", "#withdrew-code").text
        assert code and "回答は削除されました" in driver.page_source
        driver.back()  # the confirmation again would only lead to the same end page
        # the same panel id: their own end page
        assert page.start(f"{url}/s/carloan/?PROLIFIC_PID=ja-browser", "#withdrew-code").text == code
        manage(env, "export_study", "carloan", "--out", str(tmp_path / "export"))
    pa = pd.read_csv(tmp_path / "export" / "participants.csv", keep_default_na=False)
    assert len(pa) == 1 and pa["outcome"].iloc[0] == "withdrew"
    assert str(pa["gender"].iloc[0]) == "" and str(pa["age"].iloc[0]) == ""
