"""Languages: the Japanese catalogue is complete and compiled as committed, and every
participant page of a Japanese study is in Japanese (no English UI string leaks)."""

from __future__ import annotations

import gettext
import re
import shutil
from pathlib import Path
from typing import Any

import polib
import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import Client, override_settings

from recourse_engine import carloan_schema, synth_pool
from studyapp.models import Participant, Quota, Study
from studyapp.participation import forms
from studyapp.studies import carloan, services
from tests.studyapp.conftest import DESIGN, ELIGIBLE, PROFILE, Walker, start

ROOT = Path(settings.BASE_DIR)
LOCALE = ROOT / "studyapp" / "locale" / "ja" / "LC_MESSAGES"
#: the participant-facing sources whose strings the catalogue must translate (under studyapp/)
SOURCES = [
    *(
        f"participation/{name}"
        for name in (
            "forms",
            "pages",
            "views",
            "services",
            "recruitment",
            "withdrawal",
            "attention",
            "assignment",
            "questionnaire",
            "question_forms",
            "waves",  # a multi-wave study's pages, messages and e-mail
            "wave_pages",
            "wave_changes",
        )
    ),
    "definition/outcomes",  # the end pages' texts
    "definition/question_types",  # the answer checks' messages
    "definition/part_questions",  # the matrix's and ranking's words
]
_PLACEHOLDER = re.compile(r"%\(\w+\)s|\{\w+\}")


def _catalogue(path: Path) -> dict[Any, str]:
    with open(path, "rb") as f:
        cat = dict(gettext.GNUTranslations(f)._catalog)  # type: ignore[attr-defined]
    cat.pop("", None)  # the header (dates differ between compilers)
    return cat


def test_committed_mo_matches_the_po(tmp_path: Path) -> None:
    po = polib.pofile(str(LOCALE / "django.po"))
    po.save_as_mofile(str(tmp_path / "fresh.mo"))
    assert _catalogue(LOCALE / "django.mo") == _catalogue(tmp_path / "fresh.mo"), (
        "locale/ja/LC_MESSAGES/django.mo is stale: run "
        "`scripts/compilemessages` and commit it"
    )


def test_every_entry_is_translated_with_its_placeholders() -> None:
    po = polib.pofile(str(LOCALE / "django.po"))
    assert len(po) > 50
    for entry in po:
        assert entry.msgstr.strip(), f"untranslated: {entry.msgid!r}"
        assert "fuzzy" not in entry.flags, f"fuzzy: {entry.msgid!r}"
        assert not entry.obsolete
        assert sorted(_PLACEHOLDER.findall(entry.msgid)) == sorted(
            _PLACEHOLDER.findall(entry.msgstr)
        ), entry.msgid
        assert re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", entry.msgstr), entry.msgid


def test_every_msgid_in_the_sources_is_in_the_catalogue(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """makemessages over a copy of the participant-facing modules (the Jinja2 templates'
    strings: test_jinja_pages.py)."""
    (tmp_path / "studyapp").mkdir()
    for name in SOURCES:
        copy = tmp_path / "studyapp" / f"{name.replace('/', '_')}.py"
        shutil.copy(ROOT / "studyapp" / f"{name}.py", copy)
    (tmp_path / "locale").mkdir()
    monkeypatch.chdir(tmp_path)
    with override_settings(LOCALE_PATHS=[str(tmp_path / "locale")]):
        call_command("makemessages", locale=["ja"], verbosity=0, add_location="never")
    extracted = {e.msgid for e in polib.pofile(str(tmp_path / "locale/ja/LC_MESSAGES/django.po"))}
    committed = {e.msgid: e.msgstr for e in polib.pofile(str(LOCALE / "django.po"))}
    assert len(extracted) > 40
    missing = sorted(m for m in extracted if not committed.get(m))
    assert not missing, f"not in locale/ja (run makemessages -l ja and translate): {missing}"


# --- a Japanese study, page by page ---------------------------------------------------------
#: English UI strings of the catalogue (placeholders dropped): none may show on a ja page
ENGLISH = [
    e.msgid
    for e in polib.pofile(str(LOCALE / "django.po"))
    if len(e.msgid) > 3 and not _PLACEHOLDER.search(e.msgid)
]
#: the schema's and the study's English texts, which the translations replace
SCHEMA_ENGLISH = [it.label for it in carloan_schema().items] + [
    "Strongly yes",
    "Please tell us your gender.",
    "Is the AI system's plan a reasonable explanation",
    carloan.TEXTS["consent"][:40],
    carloan.TEXTS["scenario"][:40],
]


@pytest.fixture
def ja_study(transactional_db: Any) -> Study:
    schema = carloan.schema_with_translations(carloan_schema().to_dict())
    study = services.study_create(
        slug="carloan-ja",
        title="自動車ローン調査",
        schema=schema,
        pool=synth_pool(carloan_schema(), n=600, seed=1),
        design=DESIGN,
        texts={"en": carloan.TEXTS, "ja": carloan.TEXTS_JA},
        consent_version=carloan.CONSENT_VERSION,
        seed=7,
        language="ja",
    )
    study.attention_checks = [
        {"key": "ac", "prompt": "確認のため「青」を選んでください。", "options": ["赤", "青"],
         "answer": 2, "page": "profile"},
    ]  # fmt: skip
    study.save()
    services.study_set_state(study=study, state=Study.State.LIVE)
    return study


def _visible(body: str) -> str:
    """The page's text as a reader sees it (tags, scripts and attribute values dropped)."""
    body = re.sub(r"<script.*?</script>", " ", body, flags=re.S)
    return re.sub(r"<[^>]+>", " ", body)


def _assert_japanese(body: str, page: str) -> None:
    assert '<html lang="ja">' in body, page
    text = _visible(body)
    leaks = [s for s in ENGLISH + SCHEMA_ENGLISH if s in text]
    assert not leaks, f"{page}: English on a Japanese page: {leaks}"
    assert re.search(r"[\u3040-\u30ff]", text), page


def test_every_page_in_japanese(ja_study: Study, eager: None) -> None:
    client = Client()
    welcome = client.get(f"/s/{ja_study.slug}/?PROLIFIC_PID=ja-1")
    _assert_japanese(welcome.content.decode(), "welcome")
    assert "調査を始める" in welcome.content.decode()
    w = start(client, ja_study, "?PROLIFIC_PID=ja-1")
    seen = []

    def check() -> str:
        body = w.get().content.decode()
        page = w.page() or "end"
        _assert_japanese(body, page)
        seen.append(page)
        return body

    check()  # consent first
    w.post({"page": "consent", "agree": "on"})
    body = check()
    assert "あなたの性別を教えてください。" in body and "女性" in body
    # no stray ASCII ':' after a Japanese label (Django's default label suffix)
    assert "ください。:" not in body and "ください。\n:" not in body
    r = w.post({"page": "screening"})  # nothing answered: the errors in Japanese
    assert r.status_code == 400
    _assert_japanese(r.content.decode(), "screening errors")
    assert "この質問に回答してください。" in r.content.decode()
    w.post({"page": "screening", **ELIGIBLE})
    check()
    w.post({"page": "scenario"})
    body = check()
    assert "最終学歴" in body and "大学院（博士）" in body and "確認のため" in body
    w.post({"page": "profile", **PROFILE, "attention__ac": "2"})
    body = check()  # the decision page: the rejection, read before the plans
    assert "審査結果" in body and "続ける" in body
    w.post({"page": "decision"})
    for _ in range(5):
        body = check()
        assert "まったくそう思わない" in body and "妥当ですか" in body
        w.post(w.evaluation_data())
    body = check()
    assert 'id="completion-code"' in body and "完了コード" in body
    r = client.post(w.url, {"page": "consent"}, follow=True)  # a stale form: message in ja
    _assert_japanese(r.content.decode(), "stale message")
    assert "すでに送信済みです" in r.content.decode()
    assert seen[:5] == ["consent", "screening", "scenario", "profile", "decision"]


def test_waiting_withdraw_and_end_pages_in_japanese(ja_study: Study) -> None:
    w = start(Client(), ja_study)
    w.to_profile()
    w.submit_profile({**PROFILE, "attention__ac": "2"})  # not eager: the waiting page
    body = w.get().content.decode()
    assert 'id="progress"' in body
    _assert_japanese(body, "waiting")
    confirm = w.client.get(w.url + "withdraw").content.decode()
    _assert_japanese(confirm, "withdraw confirmation")
    w.client.post(w.url + "withdraw")
    _assert_japanese(w.get().content.decode(), "withdrawn")
    for outcome_page in _other_end_pages(ja_study):
        _assert_japanese(outcome_page.get().content.decode(), outcome_page.participant.state)


def _other_end_pages(study: Study) -> list[Walker]:
    out = start(Client(), study)
    out.screening({**ELIGIBLE, "occupation": "9"})
    failed = start(Client(), study)
    failed.to_profile()
    failed.submit_profile({**PROFILE, "attention__ac": "1"})
    Quota.objects.create(study=study, limit=0)
    full = start(Client(), study)
    states = [w.participant.state for w in (out, failed, full)]
    assert states == ["screened_out", "failed_attention", "quota_full"]
    return [out, failed, full]


def test_problem_pages_of_a_japanese_study(ja_study: Study, client: Client) -> None:
    r = client.get(f"/s/{ja_study.slug}/?PROLIFIC_PID=%3Cx%3E")
    assert r.status_code == 400
    _assert_japanese(r.content.decode(), "bad link")
    assert Participant.objects.count() == 0


def test_english_study_stays_english(study: Study) -> None:
    w = start(Client(), study)
    body = w.get().content.decode()
    assert '<html lang="en">' in body and "Information and consent" in body


def test_localized_schema_keeps_codes_and_refuses_mismatched_options() -> None:
    base = carloan_schema().to_dict()
    bad = {"ja": {"items": {"education": {"label": "学歴", "options": ["高校"]}}}}
    out = forms.localized_schema({**base, "translations": bad}, "ja")
    education = next(it for it in out["profile_items"] if it["key"] == "education")
    assert education["label"] == "学歴" and len(education["options"]) == 5  # options kept
    assert education["options"][0] == "High school"
    assert forms.localized_schema(base, "ja") == base  # no translations: unchanged
    same = carloan.schema_with_translations(base)
    assert [it["key"] for it in forms.localized_schema(same, "ja")["profile_items"]] == [
        it["key"] for it in base["profile_items"]
    ]


def test_carloan_japanese_texts_cover_every_text() -> None:
    assert set(carloan.TEXTS_JA) == set(carloan.TEXTS)
    for key, text in carloan.TEXTS_JA.items():
        assert re.search(r"[\u3040-\u30ff]", text), key
    assert (
        "{position}" in carloan.TEXTS_JA["plan_intro"]
        and "{total}" in carloan.TEXTS_JA["plan_intro"]
    )


def test_demo_study_carries_both_languages(transactional_db: Any) -> None:
    call_command("create_demo_study", "--no-admin", "--pool-size", "50", "--language", "ja")
    study = Study.objects.get(slug="carloan")
    assert study.language == "ja" and set(study.texts) == {"en", "ja"}
    assert study.page_texts["scenario"] == carloan.TEXTS_JA["scenario"]
    assert study.schema["translations"] == carloan.SCHEMA_TRANSLATIONS
