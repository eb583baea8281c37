"""Issues 17 and 31 (qualitative coding) in headless Debian Chromium against gunicorn on the
embedded default: a researcher writes the codebook (a duplicate code refused), chooses the
study's own text question on the plan page as the field to code, and assigns two coders;
each codes its answers blind (neither the other's codes nor the method shown), one edits a
coding (its history shown), then both finish; the method then appears, and the agreement
page shows the figures `python -m analysis coding agreement` computes from the export's
codings.csv, which are the hand-computed ones of tests/studyapp/coding/coding_plan.py.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pandas as pd
import pytest

from tests.browser.chromium import start_chromium
from tests.browser.pages import Page
from tests.browser.test_study_builder_browser import web
from tests.integration.stack import ROOT, embedded_env, manage, migrate
from tests.studyapp.coding import coding_plan as plan

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PASSWORD = "a-long-password-1"
METHOD = "method_marker_xyz"  # a method name found nowhere else on the page
SETUP = f"""
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from studyapp.models import Evaluation, Recourse, Study
from tests.studyapp.coding.conftest import ANSWERS
from tests.studyapp.console.factory import populate
s = Study.objects.get(slug='carloan')
s.questions = [{{"key": "more", "page": "evaluation", "type": "text",
                "text": {{"en": "Anything else about this plan?"}}, "required": False}}]
s.save(update_fields=['questions'])
populate(s, 3, k=4, panel=False)
Recourse.objects.filter(participant__study=s).update(method='{METHOD}')
for ev, text in zip(Evaluation.objects.filter(participant__study=s).order_by('pk'), ANSWERS):
    ev.answers = {{'more': text}}
    ev.save(update_fields=['answers'])
U = get_user_model()
U.objects.create_superuser('pi', '', '{PASSWORD}')
perms = Permission.objects.filter(content_type__app_label='studyapp_coding',
                                  codename__in=['view_code', 'view_coding', 'add_coding'])
for name in ('coder_a', 'coder_b'):
    u = U.objects.create_user(name, '', '{PASSWORD}', is_staff=True)
    u.user_permissions.set(perms)
    s.shared_with.add(u)
"""


@pytest.fixture
def driver() -> Iterator[object]:
    d = start_chromium("1400,1000")
    yield d
    d.quit()


class Console(Page):
    """The console's pages: each form is submitted with `click_to` and the element expected
    on the page that answers it."""

    def __init__(self, driver: object, url: str) -> None:
        super().__init__(driver)
        self.url = url

    def login(self, user: str, then: str, expect: str) -> None:
        self.d.delete_all_cookies()
        self.go(f"{self.url}/admin/login/?next={quote(then)}", "#id_username").send_keys(user)
        self.css("#id_password").send_keys(PASSWORD)
        self.click_to('input[type="submit"]', expect)

    def until(self, condition: object) -> None:
        """Until the page shows `condition` (read afresh at each try)."""
        from selenium.common.exceptions import (
            NoSuchElementException,
            StaleElementReferenceException,
        )
        from selenium.webdriver.support.ui import WebDriverWait

        ignored = (StaleElementReferenceException, NoSuchElementException)
        WebDriverWait(self.d, 30, ignored_exceptions=ignored).until(condition)

    def page(self) -> str:
        return self.d.page_source


def code_answers(
    console: Console, codes: list[list[str]], units: list[str], form: str = "code"
) -> None:
    """Tick each answer's codes in its `form` (code: a first coding; edit: a change) and
    submit; the answers page comes back with the row coded as ticked."""
    for unit, given in zip(units, codes, strict=True):
        row = console.css(f'tr[data-unit="{unit}"]')
        for box in row.find_elements("css selector", f'form.{form}-form input[name="codes"]'):
            if box.is_selected() != (box.get_attribute("value") in given):
                box.click()
        console.click_to(row.find_element("css selector", f"button.{form}-submit"),
                         f'tr[data-unit="{unit}"]')  # fmt: skip
        mine = "mine: " + (", ".join(given) or "(no code applies)")
        console.until(lambda d, u=unit, m=mine: m in d.find_element(
            "css selector", f'tr[data-unit="{u}"] .my-codes').text)  # fmt: skip


def test_two_coders_agreement_equals_the_export_in_chromium(driver, tmp_path: Path) -> None:  # noqa: ANN001
    env = embedded_env(tmp_path)
    migrate(env)
    manage(env, "create_demo_study", "--no-admin", "--pool-size", "1000")
    manage(env, "shell", "-c", SETUP)
    base = "/console/studies/carloan/coding/"
    with web(env, tmp_path) as url:
        c = Console(driver, url)
        # the researcher writes the codebook and assigns the coders
        c.login("pi", base, "#add-code")
        for name, definition in (("cost", "money or effort it costs"), ("effort", "time")):
            c.css("#id_code").send_keys(name)
            c.css("#id_definition").send_keys(definition)
            c.click_to("#add-code", "#codebook")
        c.css("#id_code").send_keys("cost")
        c.css("#id_definition").send_keys("again")
        assert "already in this study" in c.click_to("#add-code", "#refused").text
        assert [e.text for e in driver.find_elements("css selector", "#codebook code")] == [
            "cost", "effort"
        ]  # fmt: skip
        for coder in ("coder_a", "coder_b"):
            from selenium.webdriver.support.ui import Select

            Select(c.css("#id_coder")).select_by_visible_text(coder)
            c.click_to("#assign", "#coders")
        # only the study's own text question on the plan page is coded
        c.css('input[name="coded_fields"][value="q_more"]').click()
        c.click_to("#save-settings", "#codebook")
        assert c.css('input[name="coded_fields"][value="q_more"]').is_selected()
        # each coder codes the first ten answers, blind to the other and to the method
        answers = base + "answers/"
        for coder, codes, other in (("coder_a", plan.A, "coder_b"), ("coder_b", plan.B, "coder_a")):
            c.login(coder, answers, ".answer-row")
            units = re.findall(r'class="answer-row" data-unit="([^"]+)"', c.page())
            assert len(units) == 12 and all(u.endswith(":q_more") for u in units)
            assert METHOD not in c.page() and c.css("#blind-recourse").is_displayed()
            if coder == "coder_a":  # a first codes answer 0 otherwise, then edits it
                code_answers(c, [["effort"]], units[:1])
                code_answers(c, codes[:1], units[:1], form="edit")
                history = c.css(f'tr[data-unit="{units[0]}"] details.history')
                history.click()
                changes = [e.text for e in history.find_elements("css selector", "li.change")]
                assert len(changes) == 2 and changes[0].endswith("coded: effort")
                assert changes[1].endswith("edited: cost;effort"), changes
                code_answers(c, codes[1:], units[1 : plan.N_UNITS])
            else:
                code_answers(c, codes, units[: plan.N_UNITS])
            assert f"{other}:" not in c.page()  # blind (b: a's codes exist but are hidden)
            c.go(url + base, "#finish")
            c.click_to("#finish", "#codebook")
        c.go(url + answers, ".answer-row")
        assert "coder_a:" in c.page()  # b, both finished: a's codes now shown
        assert METHOD in c.page()  # and the method
        # the agreement page
        c.login("pi", base + "agreement/", "#alpha")
        shown_alpha = {
            r.get_attribute("data-code"): (
                r.find_element("css selector", ".alpha").text,
                int(r.find_element("css selector", ".units").text),
            )
            for r in driver.find_elements("css selector", "#alpha tbody tr")
        }
        shown_kappa = {
            r.get_attribute("data-code"): r.find_element("css selector", ".kappa").text
            for r in driver.find_elements("css selector", "#kappa tbody tr")
        }
    export = tmp_path / "export"
    manage(env, "export_study", "carloan", "--out", str(export), "--with-text")
    out = tmp_path / "agreement"
    subprocess.run(
        [sys.executable, "-m", "analysis", "coding", "agreement", "--codings",
         str(export / "codings.csv"), "--codebook", str(export / "coding_codebook.csv"),
         "--out", str(out)],
        cwd=ROOT, check=True, capture_output=True,
    )  # fmt: skip
    alpha = pd.read_csv(out / "alpha.csv").set_index("code")
    kappa = pd.read_csv(out / "kappa.csv").set_index("code")
    assert set(shown_alpha) == set(alpha.index) == set(plan.ALPHA)
    for code in plan.ALPHA:
        assert shown_alpha[code] == (f"{alpha.loc[code, 'alpha']:.3f}", alpha.loc[code, "n_units"])
        assert shown_kappa[code] == f"{kappa.loc[code, 'kappa']:.3f}"
        assert shown_alpha[code][0] == f"{plan.ALPHA[code]:.3f}"
        assert shown_kappa[code] == f"{plan.KAPPA[code]:.3f}"
