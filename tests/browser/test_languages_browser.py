"""One bilingual study in headless Debian Chromium against gunicorn on the embedded default.

The researcher's console refuses to make it live while a question lacks its Japanese text;
the Japanese PO file is downloaded from the study page, translated here with polib,
uploaded there and shown side by side; the study goes live. Then four participants share
it: one arrives with `?lang=ja` (the browser asking for English), one with a Japanese
Accept-Language, one switches to English on the welcome page, and the fourth finds the
quota of three, shared by both languages, full. The export has all four with their
language, and the Japanese participant read the imported translation.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import polib
import pytest

from tests.browser.chromium import downloaded, start_downloading_chromium
from tests.browser.pages import Page, at
from tests.integration.stack import embedded_env, manage, migrate, running

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PASSWORD = "translator-pass-1"
SETUP = f"""
from django.contrib.auth import get_user_model
from studyapp.models import Study
from studyapp.studies import updates
get_user_model().objects.create_superuser("lab", "", "{PASSWORD}")
s = Study.objects.get(slug="carloan"); s.state = "draft"; s.save()
updates.study_update(study=s, changes={{
    "languages": ["en", "ja"], "quotas": [{{"limit": 3}}],
    "questions": [{{"key": "trust", "page": "pre", "type": "single",
                    "text": {{"en": "Do you trust AI systems?"}},
                    "options": {{"en": ["Yes", "No"]}}}}],
}})
"""
#: what the test's translator writes into the Japanese PO file
TRANSLATED = {
    "texts.welcome": "翻訳ファイルから読み込んだ、ようこそのことば。",
    "questions.trust.text": "AIシステムを信頼しますか？",
    "questions.trust.options.1": "はい",
    "questions.trust.options.2": "いいえ",
}


@pytest.fixture
def driver(downloads: Path) -> Iterator[object]:
    d = start_downloading_chromium("1280,1000", downloads)
    yield d
    d.quit()


def _accept_language(driver: Any, value: str) -> None:
    """The Accept-Language header the browser sends from now on (Chrome adds the weights:
    "ja,en" is sent as "ja,en;q=0.9")."""
    agent = driver.execute_script("return navigator.userAgent")
    driver.execute_cdp_cmd(
        "Emulation.setUserAgentOverride", {"userAgent": agent, "acceptLanguage": value}
    )


def _lang(driver: Any) -> str:
    return driver.find_element("tag name", "html").get_attribute("lang")


def test_bilingual_study_translated_and_taken_in_chromium(
    driver: Any, tmp_path: Path, downloads: Path
) -> None:
    from selenium.webdriver.support.ui import Select

    page = Page(driver)
    env = embedded_env(tmp_path)
    migrate(env)
    manage(env, "create_demo_study", "--no-admin", "--pool-size", "200")
    manage(env, "shell", "-c", SETUP)
    with running(env, tmp_path) as url:
        # the researcher: going live refused while a translation is missing
        page.go(f"{url}/admin/login/?next=/console/studies/carloan/translations/", "#id_username")
        page.css("#id_username").send_keys("lab")
        page.css("#id_password").send_keys(PASSWORD)
        page.click_to('input[type="submit"]', "#side-by-side")
        assert "questions.ja.trust.text: missing" in page.css("#missing-translations").text
        page.click_to(".breadcrumbs a:nth-of-type(3)", "#go-live")
        page.click_to("#go-live", ".messagelist")
        assert "questions.ja.trust.text: missing" in page.css(".messagelist").text
        # the PO file from the study page, translated here, uploaded there
        page.css("#po-ja").click()
        po_path = downloaded(downloads, "carloan-ja.po")
        po = polib.pofile(str(po_path))
        assert po.find("questions.trust.text").comment == "Do you trust AI systems?"
        for msgid, text in TRANSLATED.items():
            po.find(msgid).msgstr = text
        translated = tmp_path / "carloan-ja-translated.po"
        po.save(str(translated))
        Select(page.css('select[form="translation-form"]')).select_by_value("ja")
        page.css('input[type="file"][form="translation-form"]').send_keys(str(translated))
        page.click_to("#upload-po", "#side-by-side")
        assert "Imported ja.po: 4 text(s) changed" in page.css(".messagelist").text
        assert TRANSLATED["texts.welcome"] in page.css("#side-by-side").text
        assert not driver.find_elements("css selector", "#missing-translations")
        page.click_to(".breadcrumbs a:nth-of-type(3)", "#go-live")
        page.click_to("#go-live", ".messagelist")
        assert "is now live" in page.css(".messagelist").text

        # 1. by link: ?lang=ja although the browser asks for English
        _accept_language(driver, "en-US,en")
        page.go(f"{url}/s/carloan/?lang=ja&PROLIFIC_PID=by-link", "#start")
        assert _lang(driver) == "ja" and TRANSLATED["texts.welcome"] in driver.page_source
        page.click_to("#start", at("consent"))
        page.agree_and_screen(at("questions_pre"))
        assert "AIシステムを信頼しますか？" in driver.page_source and "いいえ" in driver.page_source
        # 2. by the browser: a Japanese Accept-Language
        _accept_language(driver, "ja,en")
        page.go(f"{url}/s/carloan/?PROLIFIC_PID=by-browser", "#start")
        assert _lang(driver) == "ja" and page.css("#lang-ja").get_attribute("aria-current")
        page.click_to("#start", at("consent"))
        assert _lang(driver) == "ja"
        # 3. by the switch on the welcome page (the browser still asks for Japanese)
        page.go(f"{url}/s/carloan/?PROLIFIC_PID=by-switch", "#start")
        switch = page.css("#lang-en")
        assert switch.get_attribute("lang") == "en" and switch.text == "English"
        page.click_to(switch, "#start")
        assert _lang(driver) == "en" and "Welcome" in driver.page_source
        page.click_to("#start", at("consent"))
        assert _lang(driver) == "en"
        # 4. the quota of three counts both languages: full
        page.go(f"{url}/s/carloan/?lang=ja&PROLIFIC_PID=fourth", "#start")
        page.click_to("#start", "#quota-full-code")
        assert _lang(driver) == "ja"
    manage(env, "export_study", "carloan", "--out", str(tmp_path / "export"))
    pa = pd.read_csv(tmp_path / "export" / "participants.csv", keep_default_na=False)
    assert list(pa["language"]) == ["ja", "ja", "en", "ja"]
    assert list(pa["outcome"])[-1] == "quota_full" and pa["participant"].is_unique
    book = pd.read_csv(tmp_path / "export" / "codebook.csv", keep_default_na=False)
    entry = book[(book["file"] == "participants.csv") & (book["column"] == "language")]
    assert list(entry["allowed"]) == ["en; ja"]
