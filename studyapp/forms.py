"""Forms of the participant pages, generated from the study's schema.

Every page form carries a hidden ``page`` field naming the page it was rendered for, so a
submission from a stale page (back button, second tab) is recognised and changes nothing.
Radio groups render as fieldsets with a legend (Django's ``use_fieldset``), so screen
readers announce the question with each option.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django import forms

from recourse_engine import FeatureSchema

from .models import Recourse

SCALE_POINTS = 7
WHY_MAX = 2000


#: field errors are shown under the question; the summary at the top adds the question
CHOICE_ERRORS = {
    "required": "Please answer this question.",
    "invalid_choice": "Please choose one of the listed options.",
}


class PageForm(forms.Form):
    page = forms.CharField(widget=forms.HiddenInput, max_length=40)


def screening_form(
    questions: Sequence[Mapping[str, Any]], data: Mapping[str, Any] | None = None
) -> forms.Form:
    fields: dict[str, forms.Field] = {}
    for q in questions:
        label = str(q.get("label", q["key"]))
        choices = [(i, str(o)) for i, o in enumerate(q.get("options", []), start=1)]
        if q["type"] == "integer":
            lo, hi = q.get("min"), q.get("max")
            fields[q["key"]] = forms.IntegerField(
                label=label,
                min_value=lo,
                max_value=hi,
                error_messages={
                    "required": "Please answer this question.",
                    "invalid": "Please enter a whole number.",
                    "min_value": f"Please enter a number from {lo} to {hi}.",
                    "max_value": f"Please enter a number from {lo} to {hi}.",
                },
                widget=forms.NumberInput(attrs={"inputmode": "numeric"}),
            )
        elif q["type"] == "choice":
            fields[q["key"]] = forms.TypedChoiceField(
                label=label,
                choices=choices,
                coerce=int,
                widget=forms.RadioSelect,
                error_messages=CHOICE_ERRORS,
            )
        else:
            fields[q["key"]] = forms.TypedMultipleChoiceField(
                label=label,
                choices=choices,
                coerce=int,
                widget=forms.CheckboxSelectMultiple,
                error_messages={
                    "required": "Please select at least one option.",
                    "invalid_choice": "Please choose only listed options.",
                },
            )
    form_class = type("ScreeningForm", (PageForm,), fields)
    return form_class(data)


class ConsentForm(PageForm):
    agree = forms.BooleanField(
        label="I have read the information above and agree to take part.",
        error_messages={"required": "Please tick the box to agree, or close this page to leave."},
    )


class ContinueForm(PageForm):
    """A page with nothing to answer (the scenario)."""


def profile_form(schema: FeatureSchema, data: Mapping[str, Any] | None = None) -> forms.Form:
    fields: dict[str, forms.Field] = {}
    for item in schema.items:
        if item.is_numeric:
            fields[item.key] = forms.FloatField(
                label=item.label,
                min_value=item.low,
                max_value=item.high,
                error_messages={"required": "Please answer this question."},
            )
        else:
            fields[item.key] = forms.TypedChoiceField(
                label=item.label,
                choices=[(i, o) for i, o in enumerate(item.options, start=1)],
                coerce=int,
                widget=forms.RadioSelect,
                error_messages=CHOICE_ERRORS,
            )
    form_class = type("ProfileForm", (PageForm,), fields)
    return form_class(data)


def evaluation_form(
    *,
    schema: FeatureSchema,
    recourse: Recourse,
    texts: Mapping[str, Any],
    data: Mapping[str, Any] | None = None,
) -> forms.Form:
    """Acceptance and why; 'impossible?' for each changed item only; action and why."""
    scale = list(texts.get("scale", [])) or [str(i) for i in range(1, SCALE_POINTS + 1)]
    choices = [(i, f"{i}. {label}") for i, label in enumerate(scale, start=1)]
    why = str(texts.get("why_question", "Why did you make the evaluation you did?"))

    def rating(label: str) -> forms.TypedChoiceField:
        return forms.TypedChoiceField(
            label=label,
            choices=choices,
            coerce=int,
            widget=forms.RadioSelect,
            error_messages={
                "required": f"Please choose a rating from 1 to {len(scale)}.",
                "invalid_choice": f"Ratings go from 1 to {len(scale)}; please choose one.",
            },
        )

    def reason(label: str) -> forms.CharField:
        return forms.CharField(
            label=label,
            max_length=WHY_MAX,
            widget=forms.Textarea(attrs={"rows": 3}),
            error_messages={
                "required": "Please tell us briefly why.",
                "max_length": f"Please keep your answer under {WHY_MAX} characters.",
            },
        )

    fields: dict[str, forms.Field] = {
        "recourse": forms.IntegerField(widget=forms.HiddenInput),
        "acceptance": rating(str(texts.get("acceptance_question", "Acceptance"))),
        "acceptance_why": reason(why),
    }
    for key in recourse.changed:
        label = f"Impossible for you: {schema.item(key).label}?"
        fields[f"impossible_{key}"] = forms.ChoiceField(
            label=label,
            choices=[("yes", "Yes, impossible"), ("no", "No, possible")],
            widget=forms.RadioSelect,
            error_messages=CHOICE_ERRORS,
        )
    fields["action"] = rating(str(texts.get("action_question", "Action")))
    fields["action_why"] = reason(why)
    form_class = type("EvaluationForm", (PageForm,), fields)
    return form_class(data)
