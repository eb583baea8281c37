"""Issue 28, parts 3 and 4, in headless Debian Chromium against gunicorn: every participant
page (every question type, the decision, waiting, under-review and report pages, every
ending, the forms with their errors) in English and in Japanese, checked by axe-core at a
desktop viewport and at 375×812 (no serious or critical WCAG 2.2 A/AA violation) and for
its phone layout; the plan page kept as screenshots at both widths; and a study completed
with the keyboard alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from recourse_engine import carloan_schema
from tests.browser import keyboard as kb
from tests.browser.axe_audit import VIEWPORTS, Auditor, artefact_dir, screenshot, set_viewport
from tests.browser.chromium import start_chromium
from tests.browser.pages import Page, at
from tests.browser.phone_layout import phone_problems
from tests.browser.study_pages import DELAYED_PAGES, STATE_PAGES, STUDIES, Site, site
from tests.integration.stack import manage

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SCREENING = [("gender", "1"), ("occupation", "1"), ("income", "3"), ("car_purchase", "2")]
#: the pages a walk checks (forms with their errors too), in each language
WALKED = ["welcome", "consent", "consent: errors", "screening", "questions_pre: every type",
          "questions_pre: errors", "scenario", "withdraw: confirm", "profile",
          "decision (rejection)", "evaluation (plan 1)", "evaluation: errors", "questions_post",
          "end: completion"]  # fmt: skip
#: the first page's step, "page 1 of N", in each language
STEP = {"en": re.compile(r"^Page 1 of \d+$"), "ja": re.compile(r"^\d+ページ中1ページ目$")}
#: the viewport each language's participant arrives with (the English one on a desktop, the
#: Japanese one on a phone), which the welcome page records
ARRIVAL = {"en": VIEWPORTS[0], "ja": VIEWPORTS[1]}
DEVICES = (
    "from studyapp.models import Participant\n"
    "for p in Participant.objects.filter(recruitment_id__startswith='axe-').order_by('pk'):\n"
    "    print('DEVICE', p.recruitment_id, p.device_class, p.viewport_width, p.viewport_height)"
)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with site(tmp_path_factory.mktemp("a11y")) as s:
        yield s


@pytest.fixture(scope="module")
def driver() -> Iterator[object]:
    d = start_chromium("1280,900")
    yield d
    d.quit()


def _items(page: Page) -> None:
    """The questionnaire before the scenario: one answer of each type."""
    for name, value in [("q__trust_ai", "3"), ("q__numbered", "4"), ("q__tried", "2"),
                        ("q__channels", "2"), ("q__check", "1")]:  # fmt: skip
        page.choose(name, value)
    page.css('input[name="q__years"]').send_keys("12")


def _evaluation(page: Page) -> None:
    page.choose("acceptance", "5")
    page.css('textarea[name="acceptance_why"]').send_keys("It makes sense.")
    for radio in page.d.find_elements("css selector", 'input[name^="impossible_"][value="no"]'):
        radio.click()
    page.choose("action", "4")
    page.css('textarea[name="action_why"]').send_keys("I could try.")
    page.choose("q__trust", "4")


def _plan_screenshots(driver: object, language: str) -> list[Path]:
    out = artefact_dir("accessibility")
    shots = []
    for name, width, height, mobile in VIEWPORTS:
        set_viewport(driver, width, height, mobile)
        shots.append(screenshot(driver, out / f"plan-{language}-{name}-{width}px.png"))
    set_viewport(driver, *VIEWPORTS[0][1:])
    return shots


def _walk(page: Page, audit: Auditor, url: str, slug: str, language: str) -> list[Path]:
    """One participant from the welcome page to the completion code, each page (and each
    form with its errors) checked on the way; returns the plan page's screenshots."""

    def check(name: str) -> None:
        audit.check(f"{language} {name}")

    page.go(f"{url}/s/{slug}/?PROLIFIC_PID=axe-{language}", "#start")
    check("welcome")
    set_viewport(page.d, *ARRIVAL[language][1:])  # the device the participant arrives on
    page.click_to("#start", at("consent"))
    set_viewport(page.d, *VIEWPORTS[0][1:])
    assert STEP[language].match(page.css("#page-step").text), page.css("#page-step").text
    check("consent")
    page.submit(".error-summary")
    check("consent: errors")
    page.css('input[name="agree"]').click()
    page.submit(at("screening"))
    check("screening")
    page.css('input[name="age"]').send_keys("34")
    for name, value in SCREENING:
        page.choose(name, value)
    page.choose("loans", "8")
    page.submit(at("questions_pre"))
    check("questions_pre: every type")
    page.submit(".error-summary")
    check("questions_pre: errors")
    _items(page)
    code = page.d.current_url.rstrip("/").rsplit("/", 1)[-1]
    page.submit(at("scenario"))
    check("scenario")
    page.go(f"{url}/p/{code}/withdraw", "#confirm-withdraw")
    check("withdraw: confirm")
    page.go(f"{url}/p/{code}/", at("scenario"))
    page.submit(at("profile"))
    check("profile")
    for item in carloan_schema().items:
        page.choose(item.key, "1")
    page.submit("#decision-continue")
    check("decision (rejection)")
    page.continue_decision(at("evaluation-1"))
    check("evaluation (plan 1)")
    shots = _plan_screenshots(page.d, language)
    page.submit(".error-summary")
    check("evaluation: errors")
    for n in range(1, 6):
        _evaluation(page)
        page.submit(at(f"evaluation-{n + 1}") if n < 5 else at("questions_post"))
    check("questions_post")
    page.choose("q__fair", "1")
    page.submit("#completion-code")
    check("end: completion")
    return shots


def test_every_participant_page_passes_axe_in_both_languages_and_viewports(
    stack: Site, driver: object
) -> None:
    page = Page(driver)
    audit = Auditor(driver, phone_problems)
    shots = []
    for language, slug in STUDIES.items():
        shots += _walk(page, audit, stack.url, slug, language)
        for (lang, name), code in stack.codes.items():
            if lang != language:
                continue
            page.go(f"{stack.url}/p/{code}/", "h1")
            audit.check(f"{language} {name}")
            if name == "under_review":
                page.css('input[name="email"]').send_keys("not an address")
                page.submit(".error-summary")
                audit.check(f"{language} under_review: errors")
    page.go(f"{stack.url}/p/no-such-link/", "p.problem")
    audit.check("problem (unknown link)")
    report = audit.report()
    out = artefact_dir("accessibility")
    (out / "axe-report.txt").write_text(report + "\n", encoding="utf-8")
    print(f"\naxe-core, WCAG 2.2 A/AA, per page and viewport (artefacts in {out}):\n{report}")
    print("plan page screenshots:", *shots, sep="\n  ")
    shown = {(f.page, f.viewport) for f in audit.findings}
    pages = [*WALKED, *(name for name, _state, _extra in STATE_PAGES),
             *(name for name, _extra in DELAYED_PAGES), "under_review: errors"]  # fmt: skip
    wanted = {
        (f"{lang} {name}", size[0]) for lang in STUDIES for name in pages for size in VIEWPORTS
    }
    assert not wanted - shown, sorted(wanted - shown)
    failures = audit.failures()
    assert not failures, f"{len(failures)} problems:\n" + "\n".join(failures)
    devices = [line.split()[1:] for line in manage(stack.env, "shell", "-c", DEVICES).splitlines()
               if line.startswith("DEVICE ")]  # fmt: skip
    assert devices == [["axe-en", "desktop", "1280", "900"], ["axe-ja", "phone", "375", "812"]]


def test_a_study_completed_with_the_keyboard_alone(stack: Site, driver: object) -> None:
    from selenium.webdriver.support import expected_conditions as ec

    page = Page(driver)
    d = driver
    page.go(f"{stack.url}/s/{STUDIES['en']}/?PROLIFIC_PID=keyboard-1", "#start")

    def then(expect: str, action: Callable[[], object]) -> None:
        page.act_to(action, expect)

    then(at("consent"), lambda: kb.enter(d, "#start"))
    kb.choose(d, 'input[name="agree"]')
    then(at("screening"), lambda: kb.enter(d))
    kb.type_into(d, 'input[name="age"]', "34")
    for name in ("gender", "occupation", "income", "car_purchase"):
        kb.choose(d, f'input[name="{name}"]')  # TAB lands on a group's first option
    kb.choose(d, 'input[name="loans"][value="8"]')
    then(at("questions_pre"), lambda: kb.enter(d))
    for name in ("q__trust_ai", "q__numbered", "q__tried", "q__channels"):
        kb.choose(d, f'input[name="{name}"]')
    kb.type_into(d, 'input[name="q__years"]', "7")
    kb.choose(d, 'input[name="q__check"]')
    then(at("scenario"), lambda: kb.enter(d))
    then(at("profile"), lambda: kb.enter(d))
    for item in carloan_schema().items:
        kb.choose(d, f'input[name="{item.key}"]')
    then("#decision-continue", lambda: kb.enter(d))
    page.wait.until(ec.element_to_be_clickable(("id", "decision-continue")))
    then(at("evaluation-1"), lambda: kb.enter(d, "#decision-continue"))
    for n in range(1, 6):
        kb.choose(d, 'input[name="acceptance"]')
        kb.type_into(d, 'textarea[name="acceptance_why"]', "fine")
        for key in [e.get_attribute("name") for e in d.find_elements(
                "css selector", 'input[name^="impossible_"][value="yes"]')]:  # fmt: skip
            kb.choose(d, f'input[name="{key}"]')
        kb.choose(d, 'input[name="action"]')
        kb.type_into(d, 'textarea[name="action_why"]', "fine")
        kb.choose(d, 'input[name="q__trust"]')
        then(at(f"evaluation-{n + 1}") if n < 5 else at("questions_post"), lambda: kb.enter(d))
    kb.choose(d, 'input[name="q__fair"]')
    then("#completion-code", lambda: kb.enter(d))
    assert page.css("#completion-code").text
