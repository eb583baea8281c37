"""Survey logic in headless Debian Chromium against gunicorn on the embedded default (plans
made in the web process): a study whose questionnaire before the scenario has a screener (a
student is screened out) and a question shown only to the young, a trust item on the plan
pages and a mileage question shown only to car owners, with answers piped into later texts. One
participant completes it, one is screened out, and `simulate_participants` sends bots
through it (one told to trigger the screener); the export says which questions each was
shown, and each participant read their own answers back.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from recourse_engine import carloan_schema
from tests.browser.pages import Page, at
from tests.browser.test_study_builder_browser import web
from tests.integration.stack import embedded_env, manage, migrate

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _when(question: str, op: str = "equals", value: object = 1) -> dict:
    return {"all": [{"question": question, "op": op, "value": value}]}


QUESTIONS = [
    {"key": "student", "page": "pre", "type": "single", "text": {"en": "Are you a student?"},
     "options": {"en": ["Yes", "No"]}, "end_if": _when("q.student")},
    {"key": "car", "page": "pre", "type": "single", "text": {"en": "Do you have a car?"},
     "options": {"en": ["Own a car", "No car"]}},
    {"key": "years", "page": "pre", "type": "number", "min": 0, "max": 80,
     "text": {"en": "Years with a licence?"}, "show_if": _when("screening.age", "<", 30)},
    {"key": "trust", "page": "evaluation", "type": "likert", "points": 5,
     "text": {"en": "Trust this plan?"}, "show_if": _when("q.car")},
    {"key": "km", "page": "post", "type": "number", "min": 0, "max": 100000,
     "text": {"en": "You said '{q.car}' and work as '{profile.position}': km a year?"},
     "show_if": _when("q.car")},
]  # fmt: skip
SETUP = """
import json
from django.core.management import call_command
from studyapp.models import Study
from studyapp.studies import updates
call_command("create_demo_study", "--no-admin", "--pool-size", "300")
s = Study.objects.get(slug="carloan"); s.state = "draft"; s.save()
texts = dict(s.texts); texts["en"] = {**texts.get("en", {}),
    "completion": "Thank you. You told us: {q.car}.",
    "screenout": "This study is not for students, even at {screening.age}."}
updates.study_update(study=s, changes={"questions": json.loads(%r), "texts": texts,
                                       "design": "sparsest:1,random:1"})
s.state = "live"; s.save()
"""
#: bots (one told to trigger the screener), then the export, in one process
BOTS_AND_EXPORT = """
from django.core.management import call_command
call_command("simulate_participants", "carloan", "--n", "3", "--screened-out", "0.34",
             "--eager", "--no-progress")
call_command("export_study", "carloan", "--out", %r, "--with-test", "--with-panel-ids")
"""



def _screen(page: Page, pid: str, url: str, age: str) -> None:
    """Start, agree and answer the screening eligibly at `age`: on to the questionnaire."""
    page.start(f"{url}/s/carloan/?PROLIFIC_PID={pid}")
    page.css('input[name="agree"]').click()
    page.submit(at("screening"))
    page.css('input[name="age"]').send_keys(age)
    for name, value in [("gender", "1"), ("occupation", "1"), ("income", "3"),
                        ("car_purchase", "2"), ("loans", "8")]:  # fmt: skip
        page.choose(name, value)
    page.submit(at("questions_pre"))


def test_display_logic_screener_and_piping_in_chromium(driver, tmp_path: Path) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By

    page = Page(driver)
    env = {**embedded_env(tmp_path), "STUDYAPP_TASKS_EAGER": "1"}  # plans made in the web
    migrate(env)
    manage(env, "shell", "-c", SETUP % json.dumps(QUESTIONS))
    with web(env, tmp_path) as url:
        _screen(page, "driver", url, "34")
        assert driver.find_elements(By.NAME, "q__years") == []  # 34: not asked
        page.choose("q__student", "2")
        page.choose("q__car", "1")
        page.submit(at("scenario"))
        page.submit(at("profile"))
        for item in carloan_schema().items:
            page.choose(item.key, "1")
        page.submit("#decision-continue")
        page.continue_decision(at("evaluation-1"))
        for n in (1, 2):
            page.on(f"evaluation-{n}")
            page.choose("acceptance", "5")
            page.css('textarea[name="acceptance_why"]').send_keys("ok")
            for radio in driver.find_elements(
                By.CSS_SELECTOR, 'input[name^="impossible_"][value="no"]'
            ):
                radio.click()
            page.choose("action", "4")
            page.css('textarea[name="action_why"]').send_keys("ok")
            page.choose("q__trust", str(n + 2))
            page.submit(at("evaluation-2") if n == 1 else at("questions_post"))
        position = carloan_schema().item("position").options[0]
        label = page.css('label[for="id_q__km"]').text
        assert label.startswith(f"You said 'Own a car' and work as '{position}': km a year?")
        page.css('input[name="q__km"]').send_keys("12000")
        code = page.submit("#completion-code").text
        assert code and "Thank you. You told us: Own a car." in driver.page_source

        _screen(page, "student", url, "22")
        assert driver.find_elements(By.NAME, "q__years")  # 22: asked
        page.choose("q__student", "1")
        page.choose("q__car", "2")
        page.css('input[name="q__years"]').send_keys("2")
        assert page.submit("#screenout-code").text
        assert "This study is not for students, even at 22." in driver.page_source
    printed = manage(env, "shell", "-c", BOTS_AND_EXPORT % str(tmp_path / "export"))
    assert "3 participants in carloan:" in printed and "screened_out 1" in printed, printed
    pa = pd.read_csv(tmp_path / "export" / "participants.csv", keep_default_na=False, dtype=str)
    people = pa.set_index("recruitment_id")
    assert people.loc["driver", "questions_shown"] == "student;car;trust;km"
    assert people.loc["driver", "q_km"] == "12000" and people.loc["driver", "q_years"] == ""
    assert people.loc["student", "questions_shown"] == "student;car;years"
    assert people.loc["student", "outcome"] == "screened_out"
    bots = pa[pa["is_test"] == "1"]
    assert len(bots) == 3 and (bots["outcome"] == "screened_out").sum() == 1
    for _, bot in bots.iterrows():
        shown = bot["questions_shown"].split(";")
        assert shown[:2] == ["student", "car"]
        assert ("years" in shown) == (int(bot["age"]) < 30)
        owner = bot["q_car"] == "1" and bot["outcome"] == "completed"
        assert ("km" in shown) == owner and (bot["q_km"] != "") == owner
