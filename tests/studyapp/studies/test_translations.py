"""Several languages in one study, from the researcher's side: the `languages` setting (the
default first, unknown codes refused), going live refused with a path for each missing
translation, and the PO round trip (export, translate with polib, import) with its refusals,
each of which changes nothing; the same through the command, the console and the API."""

from __future__ import annotations

import io
from typing import Any

import polib
import pytest
from django.core.management import CommandError, call_command
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from studyapp.definition import study_config
from studyapp.definition.errors import ConfigError, StudyError, StudyFrozen
from studyapp.definition.languages import page_languages
from studyapp.models import STUDY_LANGUAGES, Study, default_outcome_codes
from studyapp.participation.forms import localized_schema
from studyapp.studies import carloan, services, translation_catalogue
from studyapp.studies.translation_files import TranslationRejected, po_export, po_import
from tests.studyapp.console.conftest import change_data, client_for, researcher

TRUST = {
    "key": "trust", "page": "post", "type": "single", "text": {"en": "Do you trust it?"},
    "options": {"en": ["Yes", "No"]},
}  # fmt: skip


def _settings(**settings: Any) -> list[str]:
    data = {"title": "T", "outcome_codes": default_outcome_codes(), **settings}
    return study_config.config_validate(data).languages


def _refused(**settings: Any) -> list[str]:
    with pytest.raises(ConfigError) as exc:
        _settings(**settings)
    return exc.value.messages


def _draft(**settings: Any) -> Study:
    return carloan.carloan_study_create(
        slug="tr",
        title="Translated",
        pool_size=300,
        settings={"languages": ["en", "ja"], "seed": 7, **settings},
    )


def _entries(text: str) -> dict[str, polib.POEntry]:
    return {e.msgid: e for e in polib.pofile(text)}


def _stored(study: Study) -> tuple[Any, ...]:
    study.refresh_from_db()
    return study.texts, study.questions, study.attention_checks, study.schema, study.updated_at


# --- the setting ------------------------------------------------------------------------------
def test_the_languages_are_those_with_participant_page_translations() -> None:
    assert page_languages() == tuple(code for code, _ in STUDY_LANGUAGES) == ("en", "ja")
    assert tuple(study_config.Texts.model_fields) == page_languages()


def test_languages_setting_default_first_and_unknown_codes_refused() -> None:
    assert _settings(language="ja", languages=["en", "ja"]) == ["ja", "en"]
    assert _settings(language="en") == ["en"]  # none given: the default alone
    assert _settings(language="ja", languages=["en"]) == ["ja"]  # one: it follows the default
    assert _refused(languages=["en", "fr"]) == [
        "languages[1]: 'fr' is not a language the participant pages are translated into "
        "(one of: en, ja)"
    ]
    assert _refused(languages=["en", "ja", "en"]) == ["languages[2]: 'en' is listed twice"]
    assert _refused(language="en", languages=["ja", "ja"])[0].startswith("languages[1]")


def test_attention_check_translations_are_checked() -> None:
    check = {"key": "b", "prompt": "Blue?", "options": ["Red", "Blue"], "answer": 2,
             "page": "profile"}  # fmt: skip
    bad = {**check, "translations": {"ja": {"prompt": "青?", "options": ["赤"]}}}
    assert _refused(attention_checks=[bad])[0].startswith(
        "attention_checks[0].translations.ja.options"
    )
    wrong = {**check, "translations": {"ja": {"prompt": "青?", "options": ["赤", "青", "緑"]}}}
    assert _refused(attention_checks=[wrong]) == [
        "attention_checks[0].translations.ja.options: 3 options for the check's 2"
    ]
    foreign = {**check, "translations": {"xx": {"prompt": "?", "options": ["a", "b"]}}}
    assert "'xx' is not a language" in _refused(attention_checks=[foreign])[0]


# --- going live -----------------------------------------------------------------------------
def test_going_live_is_refused_with_each_missing_translation(transactional_db: Any) -> None:
    study = _draft(
        texts={"en": carloan.TEXTS, "ja": {k: v for k, v in carloan.TEXTS_JA.items()
                                            if k != "consent"}},
        questions=[TRUST],
    )  # fmt: skip
    with pytest.raises(StudyError) as exc:
        services.study_set_state(study=study, state=Study.State.LIVE)
    message = str(exc.value)
    assert "texts.ja.consent: missing" in message
    assert "questions.ja.trust.text: missing" in message
    assert "questions.ja.trust.options.1: missing" in message
    study.refresh_from_db()
    assert study.state == Study.State.DRAFT
    assert translation_catalogue.missing_translations(study) == [
        "texts.ja.consent: missing",
        "questions.ja.trust.text: missing",
        "questions.ja.trust.options.1: missing",
        "questions.ja.trust.options.2: missing",
    ]


def test_a_single_language_study_misses_nothing(transactional_db: Any) -> None:
    study = _draft(languages=[], texts={"en": carloan.TEXTS})
    assert study.languages == ["en"] and translation_catalogue.missing_translations(study) == []


# --- the PO round trip ------------------------------------------------------------------------
def test_po_round_trip_texts_questions_checks_and_schema(transactional_db: Any) -> None:
    check = {"key": "blue", "prompt": "Choose Blue.", "options": ["Red", "Blue"], "answer": 2,
             "page": "profile"}  # fmt: skip
    study = _draft(questions=[TRUST], attention_checks=[check])
    entries = _entries(po_export(study, "ja"))
    consent = entries["texts.consent"]
    assert consent.comment == carloan.TEXTS["consent"]  # the source text, in a comment
    assert consent.msgstr == carloan.TEXTS_JA["consent"]  # what the study holds now
    assert entries["questions.trust.text"].msgstr == ""
    assert entries["schema.items.education.label"].msgstr == "最終学歴"
    assert entries["schema.evaluation.scale.1"].comment == "Strongly no"
    assert "python-brace-format" not in consent.flags

    po = polib.pofile(po_export(study, "ja"))
    for entry in po:
        if entry.msgid == "texts.consent":
            entry.msgstr = "翻訳された同意文。"
        elif entry.msgid == "questions.trust.text":
            entry.msgstr = "信頼しますか？"
        elif entry.msgid.startswith("questions.trust.options."):
            entry.msgstr = {"1": "はい", "2": "いいえ"}[entry.msgid[-1]]
        elif entry.msgid == "attention_checks.blue.prompt":
            entry.msgstr = "「青」を選んでください。"
        elif entry.msgid.startswith("attention_checks.blue.options."):
            entry.msgstr = {"1": "赤", "2": "青"}[entry.msgid[-1]]
        elif entry.msgid == "schema.items.education.label":
            entry.msgstr = "学歴（最終）"
    done = po_import(study, "ja", str(po).encode())
    assert set(done.changed) == {
        "texts.consent", "questions.trust.text", "questions.trust.options.1",
        "questions.trust.options.2", "attention_checks.blue.prompt",
        "attention_checks.blue.options.1", "attention_checks.blue.options.2",
        "schema.items.education.label",
    }  # fmt: skip
    study.refresh_from_db()
    assert study.texts["ja"]["consent"] == "翻訳された同意文。"
    assert study.texts["en"]["consent"] == carloan.TEXTS["consent"]
    assert study.questions[0]["text"] == {"en": "Do you trust it?", "ja": "信頼しますか？"}
    assert study.questions[0]["options"]["ja"] == ["はい", "いいえ"]
    assert study.attention_checks[0]["translations"] == {
        "ja": {"prompt": "「青」を選んでください。", "options": ["赤", "青"]}
    }
    labels = {
        it["key"]: it["label"] for it in localized_schema(study.schema, "ja")["profile_items"]
    }
    assert labels["education"] == "学歴（最終）" and labels["position"] == "役職"
    assert translation_catalogue.missing_translations(study) == []
    # read back, the file is what was imported
    again = _entries(po_export(study, "ja"))
    assert again["questions.trust.options.2"].msgstr == "いいえ"
    services.study_set_state(study=study, state=Study.State.LIVE)


def test_a_matrix_statements_are_texts_too(transactional_db: Any) -> None:
    grid = {"key": "grid", "page": "post", "type": "matrix", "text": {"en": "Rate the plans."},
            "options": {"en": ["No", "Yes"]}, "rows": {"en": ["Fair", "Clear"]},
            "row_keys": ["fair", "clear"]}  # fmt: skip
    study = _draft(questions=[grid])
    assert "questions.ja.grid.rows.2: missing" in translation_catalogue.missing_translations(study)
    ja = {"questions.grid.text": "プランを評価してください。", "questions.grid.options.1": "いいえ",
          "questions.grid.options.2": "はい", "questions.grid.rows.1": "公平",
          "questions.grid.rows.2": "明確"}  # fmt: skip
    po_import(study, "ja", _translated(study, **ja))
    study.refresh_from_db()
    assert study.questions[0]["rows"]["ja"] == ["公平", "明確"]
    assert translation_catalogue.missing_translations(study) == []


def test_importing_the_exported_file_unchanged_changes_nothing(transactional_db: Any) -> None:
    study = _draft()
    before = _stored(study)
    assert po_import(study, "ja", po_export(study, "ja")).changed == []
    assert _stored(study) == before


def test_placeholders_are_flagged_in_the_export(transactional_db: Any) -> None:
    texts = {"en": {**carloan.TEXTS, "plan_intro": "Plan {position} of {total}."},
             "ja": {**carloan.TEXTS_JA, "plan_intro": "プラン {position}／{total}"}}  # fmt: skip
    study = _draft(texts=texts)
    assert "python-brace-format" in _entries(po_export(study, "ja"))["texts.plan_intro"].flags


# --- bad input: refused, named, nothing changed --------------------------------------------
def _translated(study: Study, **msgstrs: str) -> str:
    po = polib.pofile(po_export(study, "ja"))
    for entry in po:
        if entry.msgid in msgstrs:
            entry.msgstr = msgstrs.pop(entry.msgid)
    for msgid, msgstr in msgstrs.items():  # ids the study does not have
        po.append(polib.POEntry(msgid=msgid, msgstr=msgstr))
    return str(po)


@pytest.mark.parametrize(
    ("msgstrs", "problem"),
    [
        ({"texts.consnet": "同意"}, "unknown message ids: texts.consnet"),
        (
            {"texts.waiting": "プランを準備しています。"},
            "texts.waiting: the translation drops the placeholder {n_plans}",
        ),
        (
            {"texts.consent": "{n_plans} 件の同意"},
            "texts.consent: the translation adds the placeholder {n_plans}",
        ),
    ],
)
def test_bad_translations_are_refused_and_change_nothing(
    transactional_db: Any, msgstrs: dict[str, str], problem: str
) -> None:
    texts = {"en": {**carloan.TEXTS, "waiting": "Preparing {n_plans} plans."},
             "ja": {**carloan.TEXTS_JA, "waiting": "{n_plans} 件のプランを準備中。"}}  # fmt: skip
    study = _draft(texts=texts)
    content = _translated(study, **msgstrs)
    before = _stored(study)
    with pytest.raises(TranslationRejected) as exc:
        po_import(study, "ja", content)
    assert problem in str(exc.value)
    assert _stored(study) == before


def test_a_list_translated_in_part_is_refused(transactional_db: Any) -> None:
    study = _draft(questions=[TRUST])
    before = _stored(study)
    with pytest.raises(TranslationRejected, match=r"questions.trust.options: 1 of 2 options"):
        po_import(study, "ja", _translated(study, **{"questions.trust.options.1": "はい"}))
    assert _stored(study) == before
    # one option of a list translated before: the others are kept, blank entries change nothing
    content = _translated(
        study, **{"schema.items.education.options.1": "高校卒", "schema.evaluation.scale.1": ""}
    )
    assert po_import(study, "ja", content).changed == ["schema.items.education.options.1"]
    study.refresh_from_db()
    options = study.schema["translations"]["ja"]["items"]["education"]["options"]
    assert options[:2] == ["高校卒", "短期大学"]
    assert study.schema["translations"]["ja"]["evaluation"]["scale"][0] == "まったくそう思わない"


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"\xff\xfe not utf-8", "not UTF-8"),
        ('msgid "texts.consent"\nmsgstr "a"\nmsgstr "b"\n', "not a PO file"),
        ("/etc/passwd", "not a PO file"),  # read as a file's text, never as a path
    ],
)
def test_a_file_that_is_no_po_file_is_refused(
    transactional_db: Any, content: Any, problem: str
) -> None:
    study = _draft()
    before = _stored(study)
    with pytest.raises(TranslationRejected, match=problem):
        po_import(study, "ja", content)
    assert _stored(study) == before


def test_wrong_language_and_frozen_study_are_refused(transactional_db: Any) -> None:
    study = _draft()
    english = po_export(study, "en")
    with pytest.raises(TranslationRejected, match="a translation into 'en', not 'ja'"):
        po_import(study, "ja", english)
    with pytest.raises(StudyError, match="'fr' is not a language of study tr"):
        po_export(study, "fr")
    services.study_set_state(study=study, state=Study.State.LIVE)
    with pytest.raises(StudyFrozen, match="frozen"):
        po_import(study, "ja", po_export(study, "ja"))


# --- the command, the console, the API ----------------------------------------------------
def test_the_translations_command(transactional_db: Any, tmp_path: Any) -> None:
    study = _draft()
    out = tmp_path / "ja.po"
    call_command("translations", study.slug, "export", "ja", "--out", str(out))
    po = polib.pofile(str(out))
    po.find("texts.consent").msgstr = "コマンドで訳した同意文。"
    po.save(str(out))
    stdout = io.StringIO()
    call_command("translations", study.slug, "import", "ja", str(out), stdout=stdout)
    assert "1 text(s) changed (texts.consent)" in stdout.getvalue()
    study.refresh_from_db()
    assert study.texts["ja"]["consent"] == "コマンドで訳した同意文。"
    bad = tmp_path / "bad.po"
    bad.write_text('msgid "texts.nope"\nmsgstr "x"\n', encoding="utf-8")
    with pytest.raises(CommandError, match="unknown message ids: texts.nope"):
        call_command("translations", study.slug, "import", "ja", str(bad))


def test_the_console_page_download_and_upload(transactional_db: Any) -> None:
    owner = researcher("owner")
    study = _draft(questions=[TRUST])
    study.owner = owner
    study.save()
    client = client_for(owner)
    page = client.get(f"/console/studies/{study.slug}/translations/").content.decode()
    assert 'id="side-by-side"' in page and "questions.ja.trust.text: missing" in page
    assert 'class="missing"' in page and carloan.TEXTS_JA["consent"][:10] in page
    r = client.get(f"/console/studies/{study.slug}/translations/ja.po")
    assert r.status_code == 200 and r["Content-Type"].startswith("text/x-gettext-translation")
    po = polib.pofile(r.content.decode())
    po.find("questions.trust.text").msgstr = "信頼しますか？"
    upload = io.BytesIO(str(po).encode())
    upload.name = "ja.po"
    r = client.post(
        f"/console/studies/{study.slug}/translations/",
        {"language": "ja", "file": upload},
        follow=True,
    )
    assert "Imported ja.po: 1 text(s) changed (questions.trust.text)" in r.content.decode()
    study.refresh_from_db()
    assert study.questions[0]["text"]["ja"] == "信頼しますか？"
    change = client.get(f"/admin/studyapp/study/{study.pk}/change/").content.decode()
    assert 'id="translations-link"' in change and 'id="po-ja"' in change
    assert 'id="upload-po"' in change


def test_the_console_form_sets_the_languages(transactional_db: Any) -> None:
    owner = researcher("owner")
    study = _draft(languages=[])
    study.owner = owner
    study.save()
    client = client_for(owner)
    url = f"/admin/studyapp/study/{study.pk}/change/"
    form = client.get(url).content.decode()
    assert 'name="languages" value="ja"' in form
    r = client.post(url, change_data(study, language="ja", languages=["en", "ja"]))
    assert r.status_code == 302, r.content.decode()[:2000]
    study.refresh_from_db()
    assert (study.language, study.languages) == ("ja", ["ja", "en"])  # the default first


def test_the_api_endpoint(transactional_db: Any) -> None:
    owner = researcher("owner")
    study = _draft()
    study.owner = owner
    study.save()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=owner).key}")
    url = f"/api/studies/{study.slug}/translations/ja/"
    r = client.get(url)
    assert r.status_code == 200
    po = polib.pofile(r.content.decode())
    po.find("texts.welcome").msgstr = "APIで訳したようこそ。"
    r = client.put(url, str(po).encode(), content_type="text/x-gettext-translation")
    assert r.status_code == 200 and r.json() == {"language": "ja", "changed": ["texts.welcome"]}
    bad = b'msgid "texts.x"\nmsgstr "y"\n'
    r = client.put(url, bad, content_type="text/x-gettext-translation")
    assert r.status_code == 400 and r.json()["problems"] == ["unknown message ids: texts.x"]
    assert client.get(f"/api/studies/{study.slug}/translations/fr/").status_code == 404
    services.study_set_state(study=study, state=Study.State.LIVE)
    r = client.put(url, str(po).encode(), content_type="text/x-gettext-translation")
    assert r.status_code == 409
