"""Issue 28, part 5, in headless Debian Chromium at 375×812 against the test server (in this
process: no server or worker to start, so the test takes seconds): a participant
takes a survey with a matrix (statements rated on one scale) and a ranking item to the end.
The questionnaire fits the phone (no sideways scrolling, option rows and targets large
enough, legends inside their boxes) and has no serious or critical axe violation, empty
and with its errors; the ranking is ordered with its move buttons (a rank select per option
without JavaScript); the answers reach the export, a column and a codebook entry per part.
The questionnaire is kept as a screenshot (artefacts: part_questions/).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest

from tests.browser.axe_audit import Auditor, artefact_dir, screenshot, set_viewport
from tests.browser.chromium import start_chromium
from tests.browser.pages import Page, at
from tests.browser.phone_layout import phone_problems

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ITEMS = [
    {"key": "trust", "page": "pre", "type": "matrix",
     "text": {"en": "How far do you agree with each statement about AI in lending?"},
     "options": {"en": ["Strongly disagree", "Disagree", "Neither agree nor disagree",
                        "Agree", "Strongly agree"]},
     "rows": {"en": ["AI systems decide on loans fairly",
                     "I would understand why an AI system turned me down",
                     "I would follow an AI system's advice to get a loan"]},
     "row_keys": ["fair", "understand", "follow"]},
    {"key": "wish", "page": "pre", "type": "ranking",
     "text": {"en": "Put what matters most in a loan first"},
     "options": {"en": ["A low interest rate", "A quick decision", "A person to talk to"]},
     "option_keys": ["rate", "speed", "person"]},
]  # fmt: skip
PHONE = (375, 812, True)
DESKTOP = (1280, 900, False)


@pytest.fixture
def driver() -> Iterator[object]:
    d = start_chromium("375,812")
    set_viewport(d, *PHONE)
    yield d
    d.quit()


def _fits_and_passes_axe(driver: object, audit: Auditor, name: str) -> None:
    audit.check(name)  # desktop, then the phone (with the layout checks)
    set_viewport(driver, *PHONE)
    assert audit.failures() == [], audit.report()


@pytest.fixture
def survey(transactional_db: Any) -> Any:
    """A live pool-collection survey (consent, screening, the items, a profile, the end)."""
    from studyapp.models import Study
    from studyapp.studies import pool_collection, services, updates
    from studyapp.studies.carloan import carloan_schema_dict

    s = pool_collection.pool_collection_study_create(
        slug="survey", title="Loans survey", schema=carloan_schema_dict()
    )
    updates.study_update(study=s, changes={"questions": ITEMS})
    services.study_set_state(study=s, state=Study.State.LIVE)
    return s


def test_a_phone_participant_answers_a_matrix_and_a_ranking(driver, live_server, survey) -> None:  # noqa: ANN001
    from recourse_engine import carloan_schema
    from studyapp.export import export_zip_stream

    page = Page(driver)
    audit = Auditor(driver, phone_problems)
    page.start(f"{live_server.url}/s/survey/?PROLIFIC_PID=phone-1")
    page.css('input[name="agree"]').click()
    page.submit(at("screening"))
    page.css('input[name="age"]').send_keys("34")
    page.choose("gender", "1")
    page.choose("income", "3")
    page.submit(at("questions_pre"))
    _fits_and_passes_axe(driver, audit, "matrix and ranking")

    # nothing answered: both refused, the page stays (and still fits)
    page.submit(at("questions_pre"))
    assert driver.find_elements("css selector", ".error-summary li") != []
    assert "Please answer this question." in driver.page_source
    _fits_and_passes_axe(driver, audit, "matrix and ranking, errors")

    # the matrix: a radio group per statement, its rows stacked on the phone
    page.choose("q__trust.fair", "4")
    page.choose("q__trust.understand", "2")
    page.choose("q__trust.follow", "5")
    first, second = (page.css(f'input[name="q__trust.fair"][value="{v}"]') for v in "12")
    assert second.rect["y"] > first.rect["y"] + 30  # one under the other, not side by side
    # the ranking: "A person to talk to" moved up twice with its button (ranking.js)
    page.css('li.ranking-option:nth-child(3) button[data-dir="up"]').click()
    page.css('li.ranking-option:nth-child(2) button[data-dir="up"]').click()
    ranks = {
        name: page.css(f'select[name="q__wish.{name}"]').get_attribute("value")
        for name in ("rate", "speed", "person")
    }
    assert ranks == {"person": "1", "rate": "2", "speed": "3"}
    assert "now rank 1" in page.css("[data-ranking-status]").get_attribute("textContent")
    assert phone_problems(driver) == []
    shots = artefact_dir("part_questions")
    shot = screenshot(driver, shots / "questionnaire_375.png")
    set_viewport(driver, *DESKTOP)  # the points side by side (kept to be looked at)
    screenshot(driver, shots / "questionnaire_desktop.png")
    set_viewport(driver, *PHONE)
    page.submit(at("profile"))

    for item in carloan_schema().items:
        page.choose(item.key, "1")
    page.submit(".code strong")

    zf = zipfile.ZipFile(io.BytesIO(b"".join(export_zip_stream(survey))))
    (row,) = (r for _, r in pd.read_csv(zf.open("participants.csv")).iterrows())
    assert (row["q_trust_fair"], row["q_trust_understand"], row["q_trust_follow"]) == (4, 2, 5)
    assert (row["q_wish_person"], row["q_wish_rate"], row["q_wish_speed"]) == (1, 2, 3)
    cb = pd.read_csv(zf.open("codebook.csv")).set_index(["file", "column"])
    assert cb.loc[("participants.csv", "q_trust_follow"), "description"].startswith(
        "How far do you agree with each statement about AI in lending? "
        "[I would follow an AI system's advice to get a loan]"
    )
    assert shot.stat().st_size > 0
