"""Several languages in one study, from the participant's side: the language comes from the
link, else the browser, else the study's default; the welcome page's switch; the choice is
kept per participant and used for their every page, attention check, e-mail and end page;
the export says which language each took the study in, while quotas and conditions are
shared."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from django.core import mail
from django.test import Client

from studyapp.export import participants_frame
from studyapp.models import Participant, Study
from studyapp.participation.language import browser_language, chosen_language
from studyapp.studies import carloan, services, updates
from tests.studyapp.conftest import PROFILE, Walker

CHECK = {
    "key": "blue", "prompt": "Please choose Blue.", "options": ["Red", "Blue"], "answer": 2,
    "page": "profile",
    "translations": {"ja": {"prompt": "「青」を選んでください。", "options": ["赤", "青"]}},
}  # fmt: skip


def _bilingual(slug: str = "bi", **settings: Any) -> Study:
    return carloan.carloan_study_create(
        slug=slug,
        title="Bilingual",
        pool_size=300,
        settings={"languages": ["en", "ja"], "seed": 7, **settings},
    )


@pytest.fixture
def bilingual(transactional_db: Any) -> Study:
    study = _bilingual(attention_checks=[CHECK])
    return services.study_set_state(study=study, state=Study.State.LIVE)


def _arrive(client: Client, study: Study, query: str = "", accept: str = "") -> Walker:
    """The welcome page (with the browser's Accept-Language), then its start button."""
    headers = {"Accept-Language": accept} if accept else {}
    r = client.get(f"/s/{study.slug}/{query}", headers=headers)
    assert r.status_code == 200
    hidden = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', r.text))
    hidden.pop("csrfmiddlewaretoken", None)
    r = client.post(f"/s/{study.slug}/", {k: html.unescape(v) for k, v in hidden.items()})
    assert r.status_code == 302
    return Walker(client, r["Location"])


# --- the order: link, browser, default -------------------------------------------------------
def test_the_browser_header_picks_the_first_offered_language_by_weight() -> None:
    assert browser_language("fr;q=1.0, ja-JP;q=0.8, en;q=0.5", ["en", "ja"]) == "ja"
    assert browser_language("en-GB,en;q=0.9,ja;q=0.8", ["en", "ja"]) == "en"
    assert browser_language("ja;q=0.2, en;q=0.9", ["en", "ja"]) == "en"
    assert browser_language("fr, de", ["en", "ja"]) is None
    assert browser_language("", ["en", "ja"]) is None


def test_link_before_browser_before_default() -> None:
    study = Study(language="en", languages=["en", "ja"])
    assert chosen_language(study, asked="ja", accept="en") == "ja"
    assert chosen_language(study, asked="", accept="ja-JP,ja;q=0.9") == "ja"
    assert chosen_language(study, asked="fr", accept="de") == "en"  # passed over, not refused
    assert chosen_language(study, asked="", accept="") == "en"
    # a language the study does not run in is never chosen, however the browser asks
    assert chosen_language(Study(language="en", languages=["en"]), asked="ja", accept="ja") == "en"


def test_arrivals_by_link_browser_and_switch_share_one_study(bilingual: Study) -> None:
    by_link = _arrive(Client(), bilingual, "?lang=ja&PROLIFIC_PID=p1")
    by_browser = _arrive(Client(), bilingual, "?PROLIFIC_PID=p2", accept="ja,en;q=0.5")
    by_default = _arrive(Client(), bilingual, "?PROLIFIC_PID=p3", accept="de")
    assert [w.participant.language for w in (by_link, by_browser, by_default)] == [
        "ja", "ja", "en",
    ]  # fmt: skip
    body = by_link.get().content.decode()
    assert '<html lang="ja">' in body and carloan.TEXTS_JA["consent"][:20] in body
    assert carloan.TEXTS["consent"][:20] in by_default.get().content.decode()
    # the browser's later wishes change nothing: the choice is the participant's
    r = by_link.client.get(by_link.url, headers={"Accept-Language": "en"})
    assert '<html lang="ja">' in r.content.decode()
    # one study: one numbering, the conditions' counts and the export shared
    frame = participants_frame(bilingual)
    assert list(frame["language"]) == ["ja", "ja", "en"]
    assert frame["participant"].is_unique


def test_the_welcome_page_switch(bilingual: Study) -> None:
    page = Client().get(f"/s/{bilingual.slug}/?PROLIFIC_PID=p9").content.decode()
    nav = re.search(r'<nav class="language-switch" aria-label="Language">(.*?)</nav>', page, re.S)
    assert nav is not None
    links = re.findall(r'<a href="([^"]+)" id="lang-(\w+)" lang="(\w+)" hreflang="\w+"', nav[1])
    assert [(code, lang) for _, code, lang in links] == [("en", "en"), ("ja", "ja")]
    ja_link = html.unescape(links[1][0])
    assert "PROLIFIC_PID=p9" in ja_link and "lang=ja" in ja_link
    assert 'aria-current="true">English' in nav[1]
    switched = Client().get(ja_link).content.decode()
    assert '<html lang="ja">' in switched and 'aria-label="言語"' in switched
    assert 'name="lang" value="ja"' in switched  # the start form carries the choice


def test_a_study_in_one_language_has_no_switch(transactional_db: Any) -> None:
    study = carloan.carloan_study_create(slug="one", title="One", pool_size=300)
    services.study_set_state(study=study, state=Study.State.LIVE)
    assert study.languages == ["en"]
    page = Client().get(f"/s/{study.slug}/?lang=ja").content.decode()
    assert "language-switch" not in page and '<html lang="en">' in page


# --- every text in the participant's language -------------------------------------------------
def test_attention_check_and_end_page_in_the_participants_language(
    bilingual: Study, eager: None
) -> None:
    w = _arrive(Client(), bilingual, "?lang=ja")
    w.to_profile()
    body = w.get().content.decode()
    assert "「青」を選んでください。" in body and "Please choose Blue." not in body
    w.submit_profile({**PROFILE, "attention__blue": "2"})
    assert w.participant.attention == {"blue": 2} and w.participant.attention_failures == 0
    while w.participant.state == Participant.State.EVALUATING:
        w.post(w.evaluation_data())
    end = w.get().content.decode()
    assert 'id="completion-code"' in end and carloan.TEXTS_JA["completion"][:15] in end


def test_e_mails_in_the_participants_language(transactional_db: Any) -> None:
    study = _bilingual(
        "mail",
        release_mode="delayed",
        release_after_days=1,
        texts={"en": {**carloan.TEXTS, "title": "Loan study"},
               "ja": {**carloan.TEXTS_JA, "title": "ローン調査"}},
    )  # fmt: skip
    services.study_set_state(study=study, state=Study.State.LIVE)
    w = _arrive(Client(), study, "?lang=ja")
    w.to_profile()
    w.submit_profile()
    w.post({"page": "under_review", "email": "p@example.org"})
    assert mail.outbox[-1].subject.startswith("ローン調査: ")
    assert "審査" in mail.outbox[-1].subject


def test_an_old_participant_without_a_language_reads_the_studys(bilingual: Study) -> None:
    w = _arrive(Client(), bilingual, "?lang=ja")
    Participant.objects.filter(pk=w.participant.pk).update(language="")
    assert w.participant.page_language == "en"
    assert '<html lang="en">' in w.get().content.decode()
    frame = participants_frame(bilingual)
    assert list(frame["language"]) == ["en"]  # the export says what they read


def test_quotas_are_shared_between_languages(transactional_db: Any) -> None:
    study = _bilingual("quota", quotas=[{"limit": 2}])
    services.study_set_state(study=study, state=Study.State.LIVE)
    for query in ("?lang=ja", "?lang=en", "?lang=ja"):
        _arrive(Client(), study, query)
    states = list(Participant.objects.order_by("pk").values_list("language", "state"))
    assert [s for _, s in states][-1] == Participant.State.QUOTA_FULL
    assert [lang for lang, _ in states] == ["ja", "en", "ja"]


def test_export_codebook_describes_the_language_column(bilingual: Study) -> None:
    from studyapp.export import codebook_frame
    from studyapp.export.tables import Tables

    tables = Tables.of(bilingual)
    book = codebook_frame(bilingual, tables.columns, tables)
    row = book[(book["file"] == "participants.csv") & (book["column"] == "language")].iloc[0]
    assert row["allowed"] == "en; ja"
    assert "language the participant took the study in" in row["description"]


def test_languages_are_frozen_once_live(bilingual: Study) -> None:
    from studyapp.definition.errors import StudyFrozen

    with pytest.raises(StudyFrozen, match="languages"):
        updates.study_update(study=bilingual, changes={"languages": ["en"]})
