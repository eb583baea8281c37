"""The participant pages' Jinja2 templates (studyapp/jinja2): every string they translate is in
the Japanese catalogue under the msgid Django's templates used, values print and escape as in
Django's templates, and a form field written with one template has what Django's form renderer
wrote (the same inputs, labels, texts and errors), laid out for phones and screen readers."""

from __future__ import annotations

import datetime as dt
from html.parser import HTMLParser
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
    assert not missing, (
        f"not in locale/ja (add them to django.po, scripts/compilemessages): {missing}"
    )


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


class _Markup(HTMLParser):
    """What a field's markup says: its controls with their attributes, the text a reader
    sees (visually hidden text apart), each label's target and text, and where every
    radio button and box sits (the tags around it)."""

    CONTROLS = ("input", "textarea", "select", "option", "fieldset", "legend", "ul")

    def __init__(self, html: str) -> None:
        super().__init__()
        self.controls: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.text: list[str] = []
        self.hidden_text: list[str] = []
        self.labels: dict[str, str] = {}
        self.option_parents: list[list[str]] = []
        self.open: list[tuple[str, dict[str, str | None]]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.CONTROLS:
            self.controls.append((tag, sorted(attrs)))
        found = dict(attrs)
        if tag == "input" and found.get("type") in ("radio", "checkbox"):
            self.option_parents.append([f"{t}.{a.get('class', '')}" for t, a in self.open])
        if tag != "input":
            self.open.append((tag, found))

    def handle_endtag(self, tag: str) -> None:
        while self.open and self.open.pop()[0] != tag:
            pass

    def handle_data(self, data: str) -> None:
        words = data.split()
        if any(a.get("class") == "visually-hidden" for _t, a in self.open):
            self.hidden_text += words
            return
        self.text += words
        label = next((a.get("for") for t, a in reversed(self.open) if t == "label"), None)
        if label:
            self.labels[label] = " ".join([*self.labels.get(label, "").split(), *words])


@pytest.mark.parametrize("language", ["en", "ja"])
@pytest.mark.parametrize("data", [None, {}, BAD], ids=["unbound", "empty", "bad"])
def test_a_field_in_one_template_has_what_djangos_renderer_wrote(
    language: str, data: dict[str, Any] | None
) -> None:
    """The same inputs (attributes and all), labels, texts and errors as Django's own
    renderer; every option inside its label in a row of its own (a lone tick box too); a
    rating scale's group described by its two ends."""
    with translation.override(language):
        ours, reference = _forms(data), _forms(data)
        for form in reference:
            form.renderer = Jinja2()  # Django's own: a template per widget and option
        pairs = [
            (a, b) for f, g in zip(ours, reference, strict=True) for a, b in zip(f, g, strict=True)
        ]
        assert len(pairs) > 40
        scales = 0
        for bf, django_bf in pairs:
            if bf.is_hidden:
                assert str(bf) == str(django_bf), bf.name
                continue
            mine, django = _Markup(bf.as_field_group()), _Markup(django_bf.as_field_group())
            fieldset = [dict(a) for t, a in mine.controls if t == "fieldset"]
            controls = [(t, a) for t, a in mine.controls if t != "fieldset"]
            assert controls == [(t, a) for t, a in django.controls if t != "fieldset"], bf.name
            assert sorted(mine.text) == sorted(django.text), bf.name  # a tick box: label last
            assert mine.labels == django.labels, bf.name
            assert all(p[-2:] == ["div.option", "label."] for p in mine.option_parents), bf.name
            assert len(mine.option_parents) == len(django.option_parents), bf.name
            if getattr(bf.field.widget, "is_scale", False):
                scales += 1
                anchors = " ".join(mine.hidden_text)
                for _code, end in (bf.field.choices[0], bf.field.choices[-1]):
                    assert " ".join(str(end).split()) in anchors, bf.name
                assert f"{bf.auto_id}_anchors" in fieldset[0]["aria-describedby"], bf.name
                if bf.errors:
                    assert f"{bf.auto_id}_error" in fieldset[0]["aria-describedby"], bf.name
        assert scales == 6  # the evaluation's two ratings; the two Likert items on it and alone


def test_an_unknown_widget_is_left_to_django() -> None:
    def pick() -> dict[str, dj_forms.Field]:
        return {"pick": dj_forms.ChoiceField(choices=[(1, "a")])}

    ours, reference = type("F", (forms.PageForm,), pick())(), type("F", (dj_forms.Form,), pick())()
    reference.renderer = Jinja2()
    assert ours["pick"].as_field_group() == reference["pick"].as_field_group()
    assert "<select" in ours["pick"].as_field_group()


def test_the_shared_radio_group_writes_what_a_choice_field_writes() -> None:
    """`studyapp/_choices.html`'s `group`, for widgets that ask by choosing from plain
    values (a matrix's statements), writes the fieldset, legend and option rows a choice
    question's field does."""
    field = type("F", (forms.PageForm,), question_fields(QUESTIONS[6:7], "en"))()["q__check"]
    env = forms.PAGE_RENDERER.engine.env
    written = env.from_string(
        '{% from "studyapp/_choices.html" import group %}'
        "{{ group(legend, rows_id, choices, name, required=True) }}"
    ).render(
        legend=field.label, rows_id=field.auto_id, choices=field.field.choices, name=field.html_name
    )
    mine, ours = _Markup(written), _Markup(field.as_field_group())
    assert mine.controls == ours.controls and mine.labels == ours.labels
    assert mine.option_parents == ours.option_parents and len(mine.option_parents) == 2


@pytest.mark.parametrize("data", [None, BAD], ids=["unbound", "bad"])
def test_the_option_rows_of_a_choice_field_are_option_rows(data: dict[str, Any] | None) -> None:
    """`options` writes each row itself (no macro call per option): byte for byte the
    `option_row` that a tick box and a matrix's rows use."""
    from studyapp.participation.field_renderer import widget_context

    env = forms.PAGE_RENDERER.engine.env
    choices = env.get_template("studyapp/_choices.html").module
    fields = [bf for form in _forms(data) for bf in form if not bf.is_hidden]
    widgets = [w for bf in fields if (w := widget_context(bf)) and "optgroups" in w]
    assert len(widgets) > 10
    for w in widgets:
        rows = [
            str(choices.option_row(o["type"], o["name"], o["value"], o["label"], o["attrs"]))
            for _group, opts, _index in w["optgroups"]
            for o in opts
        ]
        written = str(choices.options(w))
        assert all(f"\n  {row}" in written for row in rows), w["name"]
        assert written.count('<div class="option">') == len(rows), w["name"]
