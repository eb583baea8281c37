"""Forms of the participant pages, generated from the study's schema.

Every page form carries a hidden ``page`` field naming the page it was rendered for, so a
submission from a stale page (back button, second tab) is recognised and changes nothing.
Radio groups render as fieldsets with a legend (Django's ``use_fieldset``), so screen
readers announce the question with each option.

Texts: the app's own words go through Django's translation machinery; the schema's
labels and options are the schema's, in its language, unless the schema carries a
``translations`` entry for the study's language (`localized_schema`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from django import forms
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from recourse_engine import FeatureSchema
from studyapp.definition import screening
from studyapp.definition.question_types import ScaleSelect
from studyapp.definition.questions import attention_question
from studyapp.models import Recourse
from studyapp.participation.attention import FIELD_PREFIX
from studyapp.participation.field_renderer import PageRenderer
from studyapp.participation.question_forms import question_field

log = logging.getLogger(__name__)

SCALE_POINTS = 7
WHY_MAX = 2000


#: field errors are shown under the question; the summary at the top adds the question
CHOICE_ERRORS = {
    "required": gettext_lazy("Please answer this question."),
    "invalid_choice": gettext_lazy("Please choose one of the listed options."),
}


def _relabel(entry: dict[str, Any], tr: Any, where: str) -> dict[str, Any]:
    """An item or question with its translated label/options (same number of options)."""
    if not isinstance(tr, Mapping):
        return entry
    out = dict(entry)
    if isinstance(tr.get("label"), str) and tr["label"].strip():
        out["label"] = tr["label"]
    options = tr.get("options")
    if isinstance(options, list) and "options" in entry:
        if len(options) == len(entry["options"]) and all(isinstance(o, str) for o in options):
            out["options"] = list(options)
        else:
            log.warning("%s: translated options do not match the schema's; kept as is", where)
    return out


def localized_schema(schema: Mapping[str, Any], language: str) -> dict[str, Any]:
    """The schema dict with labels, options and evaluation texts in `language` when its
    ``translations[language]`` has them ({"items": {key: {label, options}}, "screening":
    {key: {label, options}}, "evaluation": {text key: text, "scale": [...]}}). Only what
    participants read changes; keys, codes and the number of options never do."""
    tr = (schema.get("translations") or {}).get(language) if language else None
    if not isinstance(tr, Mapping):
        return dict(schema)
    out = dict(schema)
    items_key = "profile_items" if "profile_items" in schema else "items"
    items_tr = tr.get("items") or {}
    out[items_key] = [
        _relabel(it, items_tr.get(it.get("key")), f"item {it.get('key')!r}")
        for it in schema.get(items_key, [])
    ]
    screening_tr = tr.get("screening") or {}
    out["screening"] = [
        _relabel(q, screening_tr.get(q.get("key")), f"screening {q.get('key')!r}")
        if isinstance(q, Mapping)
        else q
        for q in schema.get("screening", [])
    ]
    evaluation = dict(schema.get("evaluation") or {})
    for key, text in (tr.get("evaluation") or {}).items():
        if key == "scale":
            if isinstance(text, list) and len(text) == len(evaluation.get("scale", text)):
                evaluation["scale"] = list(text)
        elif isinstance(text, str) and text.strip():
            evaluation[key] = text
    out["evaluation"] = evaluation
    return out


#: a label ending in one of these takes no suffix (no "Why?:" or 「…ください。:」)
_ENDS_SENTENCE = tuple("?.:!？。：！")
#: the suffix Django adds after a label, per page language (Japanese labels take none)
LABEL_SUFFIX = {"en": ":", "ja": ""}


def label_suffix(label: str, language: str | None) -> str:
    """What follows a question's label in `language`: nothing after a label that ends a
    sentence, else the language's suffix."""
    if str(label).rstrip().endswith(_ENDS_SENTENCE):
        return ""
    return LABEL_SUFFIX.get((language or "en").split("-")[0], "")


#: participant forms render a field with one Jinja2 template (`field_renderer`): the same
#: markup as Django's widget templates at a fraction of the CPU, on the pages every
#: participant loads (the admin keeps the default renderer and its own widget templates)
PAGE_RENDERER = PageRenderer()


class PageForm(forms.Form):
    default_renderer = PAGE_RENDERER
    page = forms.CharField(widget=forms.HiddenInput, max_length=40)

    def __init__(
        self, *args: Any, page_fields: Mapping[str, forms.Field] | None = None, **kwargs: Any
    ) -> None:
        """`page_fields`: fields built for this request, after the class's own. Django copies
        a form class's fields deeply for each instance (they are shared); these are this
        request's alone, so they are used as they are, and no class is made per request (in a
        profile of the plan page, the copy alone took 7% of its time)."""
        super().__init__(*args, **kwargs)
        if page_fields:
            self.fields.update(page_fields)
        language = translation.get_language()
        for field in self.fields.values():
            field.label_suffix = label_suffix(str(field.label or ""), language)


def attention_fields(checks: Sequence[Mapping[str, Any]]) -> dict[str, forms.Field]:
    """One radio question per instructed-response check (named apart from schema items)."""
    return {
        f"{FIELD_PREFIX}{c['key']}": question_field(attention_question(c), "en") for c in checks
    }


def attention_answers(cleaned: Mapping[str, Any]) -> dict[str, int]:
    return {k[len(FIELD_PREFIX) :]: v for k, v in cleaned.items() if k.startswith(FIELD_PREFIX)}


def _with_checks(
    fields: dict[str, forms.Field], checks: Sequence[Mapping[str, Any]], at: int
) -> dict[str, forms.Field]:
    """Insert the checks' questions at position `at` among the page's own questions."""
    items = list(fields.items())
    extra = list(attention_fields(checks).items())
    return dict(items[:at] + extra + items[at:])


def screening_form(
    questions: Sequence[Mapping[str, Any]], data: Mapping[str, Any] | None = None
) -> forms.Form:
    """The screening page: each question asked by its type (`screening.as_question`), in the
    words of the schema it comes from (already in the page's language)."""
    fields = {q["key"]: question_field(screening.as_question(q), "en") for q in questions}
    return PageForm(data, page_fields=fields)


class ConsentForm(PageForm):
    """Agree (the box ticked) or decline (the second button; nothing else is needed)."""

    agree = forms.BooleanField(
        label=gettext_lazy("I have read the information above and agree to take part."),
        required=False,
    )
    decision = forms.ChoiceField(
        choices=[("agree", "agree"), ("decline", "decline")],
        required=False,
        widget=forms.HiddenInput,
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("decision") != "decline" and not data.get("agree"):
            self.add_error(
                "agree",
                _("Please tick the box to agree, or choose 'I do not agree' to leave."),
            )
        return data

    @property
    def declined(self) -> bool:
        return self.cleaned_data.get("decision") == "decline"


class ContinueForm(PageForm):
    """A page with nothing to answer (the scenario)."""


class ContactForm(PageForm):
    """The "under review" page: an optional address for the return link and the notice."""

    email = forms.EmailField(
        label=gettext_lazy(
            "E-mail address (optional): we send you your link now and a notice "
            "when the result is ready"
        ),
        required=False,
        max_length=254,
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
    )


def profile_form(
    schema: FeatureSchema,
    data: Mapping[str, Any] | None = None,
    checks: Sequence[Mapping[str, Any]] = (),
) -> forms.Form:
    """A question per schema item; attention checks, if any, half-way down."""
    fields: dict[str, forms.Field] = {}
    for item in schema.items:
        if item.is_numeric:
            fields[item.key] = forms.FloatField(
                label=item.label,
                min_value=item.low,
                max_value=item.high,
                error_messages={"required": _("Please answer this question.")},
            )
        else:
            fields[item.key] = forms.TypedChoiceField(
                label=item.label,
                choices=[(i, o) for i, o in enumerate(item.options, start=1)],
                coerce=int,
                widget=forms.RadioSelect,
                error_messages=CHOICE_ERRORS,
            )
    fields = _with_checks(fields, checks, (len(fields) + 1) // 2)
    return PageForm(data, page_fields=fields)


def evaluation_form(
    *,
    schema: FeatureSchema,
    recourse: Recourse,
    texts: Mapping[str, Any],
    data: Mapping[str, Any] | None = None,
    checks: Sequence[Mapping[str, Any]] = (),
    extra: Mapping[str, forms.Field] | None = None,
) -> forms.Form:
    """Acceptance and why; 'impossible?' for each changed item only; action and why (an
    attention check, if any, before the action question); then the study's own items of the
    evaluation page (`extra`, in the order the participant sees them)."""
    scale = list(texts.get("scale", [])) or [str(i) for i in range(1, SCALE_POINTS + 1)]
    choices = [(i, f"{i}. {label}") for i, label in enumerate(scale, start=1)]
    why = str(texts.get("why_question") or _("Why did you make the evaluation you did?"))
    n = len(scale)

    def rating(label: str) -> forms.TypedChoiceField:
        return forms.TypedChoiceField(
            label=label,
            choices=choices,
            coerce=int,
            widget=ScaleSelect,
            error_messages={
                "required": _("Please choose a rating from 1 to %(n)s.") % {"n": n},
                "invalid_choice": _("Ratings go from 1 to %(n)s; please choose one.") % {"n": n},
            },
        )

    def reason(label: str) -> forms.CharField:
        return forms.CharField(
            label=label,
            max_length=WHY_MAX,
            widget=forms.Textarea(attrs={"rows": 3}),
            error_messages={
                "required": _("Please tell us briefly why."),
                "max_length": _("Please keep your answer under %(n)s characters.") % {"n": WHY_MAX},
            },
        )

    fields: dict[str, forms.Field] = {
        "recourse": forms.IntegerField(widget=forms.HiddenInput),
        "acceptance": rating(str(texts.get("acceptance_question") or _("Acceptance"))),
        "acceptance_why": reason(why),
    }
    yes_no = [("yes", _("Yes, impossible")), ("no", _("No, possible"))]  # translated once
    for key in recourse.changed:
        label = _("Impossible for you: %(item)s?") % {"item": schema.item(key).label}
        fields[f"impossible_{key}"] = forms.ChoiceField(
            label=label,
            choices=yes_no,
            widget=forms.RadioSelect,
            error_messages=CHOICE_ERRORS,
        )
    fields = _with_checks(fields, checks, len(fields))
    fields["action"] = rating(str(texts.get("action_question") or _("Action")))
    fields["action_why"] = reason(why)
    fields.update(extra or {})
    return PageForm(data, page_fields=fields)
