"""The participant pages' Jinja2 templates (studyapp/jinja2): every string they translate is in
the Japanese catalogue under the msgid Django's templates used, values print and escape as in
Django's templates, and a form field written with one template reads as Django's form renderer
wrote it."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import polib
import pytest
from django import forms as dj_forms
from django.conf import settings
from django.forms.renderers import Jinja2
from django.template import engines
from django.template.defaultfilters import linebreaks_filter
from django.utils import translation
from django.utils.safestring import mark_safe
from django.utils.translation import gettext_lazy

from recourse_engine import carloan_schema
from studyapp.definition import outcomes
from studyapp.definition.questions import Question
from studyapp.participation import forms
from studyapp.participation.question_forms import question_fields

ROOT = Path(settings.BASE_DIR)
TEMPLATES = ROOT / "studyapp" / "jinja2"
PO = ROOT / "studyapp" / "locale" / "ja" / "LC_MESSAGES" / "django.po"
NASTY = 'It\'s "odd" & <b>bold</b> café'


def _env() -> Any:
    return engines["jinja2"].env


def _template_msgids() -> dict[str, list[str]]:
    """msgid -> the templates using it (jinja2's own extraction of _() and gettext()), with
    the outcome table's texts, which the end page translates."""
    env, found = _env(), {}
    for path in sorted(TEMPLATES.rglob("*.html")):
        for _line, _func, message in env.extract_translations(path.read_text()):
            for msgid in message if isinstance(message, tuple) else (message,):
                if msgid:
                    found.setdefault(msgid, []).append(path.name)
    for ending in outcomes.ENDINGS:
        for msgid in (ending.title, ending.heading, ending.text, ending.code_label):
            found.setdefault(msgid, []).append(f"end.html ({ending.state})")
    return found


def test_every_template_string_is_in_the_japanese_catalogue() -> None:
    found = _template_msgids()
    assert len(found) > 60 and "Plan %(position)s of %(total)s" in found
    catalogue = {e.msgid: e.msgstr for e in polib.pofile(str(PO))}
    missing = {m: where for m, where in found.items() if not catalogue.get(m)}
    assert not missing, f"not in locale/ja (add them to django.po, scripts/compilemessages): {missing}"


def test_placeholders_are_filled_as_blocktranslate_filled_them() -> None:
    catalogue = {e.msgid: e.msgstr for e in polib.pofile(str(PO))}
    page = _env().from_string(
        '{{ _("Plan %(position)s of %(total)s", position=2, total=5) }}|'
        '{{ _("We sent your link to %(email)s.", email=email|django_escape) }}'
    )
    with translation.override("ja"):
        ja = page.render(email="o'brien@example.org")
    want = catalogue["Plan %(position)s of %(total)s"] % {"position": 2, "total": 5}
    email = catalogue["We sent your link to %(email)s."] % {"email": "o&#x27;brien@example.org"}
    assert ja == f"{want}|{email}"
    with translation.override("en"):
        assert page.render(email="a@b.org").startswith("Plan 2 of 5|")


@pytest.mark.parametrize(
    "value",
    [
        NASTY,
        3,
        2.5,
        None,
        True,
        gettext_lazy("Next"),
        mark_safe("<i>kept</i>"),
        dt.date(2025, 1, 2),
    ],
)
def test_values_print_as_in_django_templates(value: Any) -> None:
    django_out = engines["django"].from_string("{{ v }}|{{ v|linebreaks }}").render({"v": value})
    jinja_out = _env().from_string("{{ v }}|{{ v|linebreaks }}").render(v=value)
    assert jinja_out == django_out
    assert _env().from_string("[{{ missing }}][{{ missing.attr }}]").render() == "[][]"


def test_linebreaks_does_not_escape_a_translated_default_again() -> None:
    out = _env().from_string('{{ (t or _("Don\'t & go"))|linebreaks }}').render(t="")
    assert out == linebreaks_filter(mark_safe("Don't & go"))


# --- the field macro against Django's own rendering ------------------------------------------
def _question(key: str, type_: str, **extra: Any) -> Question:
    return Question.model_validate(
        {"key": key, "page": "pre", "type": type_, "text": {"en": f"{NASTY} {key}"}, **extra}
    )


QUESTIONS = [
    _question("trust", "likert", points=3, options={"en": ["No'", 'b"', "<yes>"]}),
    _question("plain", "likert", points=4),
    _question("fair", "slider", min=0, max=10, step=0.5),
    _question("guess", "number", min=18, max=99),
    _question("share", "number", min=0, max=1, decimals=2),
    _question("tools", "multi", options={"en": ["Mail's", "Chat"]}),
    _question("check", "attention", options={"en": ["Red", "Blue"]}, answer=2),
    _question("comment", "text", max_length=20, required=False),
    _question("why", "text", max_length=20),
]
CHECKS = [{"key": "ac", "prompt": NASTY, "options": ["a'", 'b"'], "answer": 2}]
SCREENING = [
    {"key": "age", "type": "integer", "label": "Your age?", "min": 18, "max": 99},
    {"key": "gender", "type": "choice", "label": NASTY, "options": ["F'", "M"]},
    {"key": "jobs", "type": "multi", "label": "Jobs", "options": ["a", "b&c"]},
]


def _forms(data: dict[str, Any] | None) -> list[dj_forms.Form]:
    schema = carloan_schema()
    recourse = SimpleNamespace(changed=[schema.items[0].key, schema.items[1].key])
    texts = {"scale": ["Never'", "Maybe", 'Yes "sure"'], "why_question": NASTY}
    extra = question_fields(QUESTIONS[:3], "en")
    questionnaire = type("Q", (forms.PageForm,), question_fields(QUESTIONS, "en"))
    return [
        forms.ConsentForm(data),
        forms.ContinueForm(data),
        forms.ContactForm(data),
        forms.screening_form(SCREENING, data),
        forms.profile_form(schema, data, CHECKS),
        forms.evaluation_form(
            schema=schema, recourse=recourse, texts=texts, data=data, checks=CHECKS, extra=extra
        ),
        questionnaire(data),
    ]


BAD = {"page": "x'", "age": "17", "gender": "9", "jobs": ["1", "7"], "q__fair": "11",
       "q__guess": "<b>", "q__share": "0.5", "q__tools": ["1"], "q__comment": "'x' & <y>",
       "acceptance": "2", "email": "bad'", "recourse": "abc"}  # fmt: skip


@pytest.mark.parametrize("language", ["en", "ja"])
@pytest.mark.parametrize("data", [None, {}, BAD], ids=["unbound", "empty", "bad"])
def test_a_field_in_one_template_is_what_djangos_renderer_wrote(
    language: str, data: dict[str, Any] | None
) -> None:
    with translation.override(language):
        ours, reference = _forms(data), _forms(data)
        for form in reference:
            form.renderer = Jinja2()  # Django's own: a template per widget and option
        pairs = [
            (a, b) for f, g in zip(ours, reference, strict=True) for a, b in zip(f, g, strict=True)
        ]
        assert len(pairs) > 40
        for bf, django_bf in pairs:
            if bf.is_hidden:
                assert str(bf) == str(django_bf), bf.name
            else:
                assert bf.as_field_group() == django_bf.as_field_group(), bf.name


def test_an_unknown_widget_is_left_to_django() -> None:
    def pick() -> dict[str, dj_forms.Field]:
        return {"pick": dj_forms.ChoiceField(choices=[(1, "a")])}

    ours, reference = type("F", (forms.PageForm,), pick())(), type("F", (dj_forms.Form,), pick())()
    reference.renderer = Jinja2()
    assert ours["pick"].as_field_group() == reference["pick"].as_field_group()
    assert "<select" in ours["pick"].as_field_group()
