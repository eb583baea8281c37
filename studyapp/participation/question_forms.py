"""Form fields of researcher-defined items (`studies.questions`), in the page's language.

Each item becomes one field named ``q__<key>``: radios for Likert, single-choice and attention
items, check boxes for multiple choice, a text box for text, a number box or a slider for
numbers. The field's own check is the one the service applies again
(`questionnaire.answer_check`), so the page and the service say the same thing about a bad
answer. On a page that timed out, no answer is required.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from studyapp.participation import questionnaire
from studyapp.studies.questions import Question

#: form field name prefix, apart from schema items and attention checks
FIELD_PREFIX = "q__"


class RangeInput(forms.NumberInput):
    input_type = "range"


class AnswerField(forms.Field):
    """A number, slider or text answer checked by `questionnaire.answer_check`."""

    def __init__(self, question: Question, **kwargs: Any) -> None:
        self.question = question
        super().__init__(**kwargs)

    def to_python(self, value: Any) -> Any:
        if isinstance(value, str):
            value = value.strip() if self.question.type != "text" else value
        return value

    def validate(self, value: Any) -> None:
        if value in self.empty_values and self.required:
            raise ValidationError(_("Please answer this question."), code="required")

    def clean(self, value: Any) -> Any:
        value = self.to_python(value)
        self.validate(value)
        try:
            return questionnaire.answer_check(self.question, value)
        except questionnaire.AnswerError as exc:
            raise ValidationError(str(exc), code="invalid") from None


def _choices(q: Question, language: str) -> list[tuple[int, str]]:
    labels = q.option_labels(language)
    if q.type == "likert" and q.option_labels("en") != [str(i) for i in q.codes()]:
        return [(i, f"{i}. {label}") for i, label in enumerate(labels, start=1)]
    return list(enumerate(labels, start=1))


def question_field(q: Question, language: str, *, required: bool = True) -> forms.Field:
    """The field of one item (`required` False: a timed-out page needs no answer)."""
    label = q.label(language)
    need = q.required and required
    choice_errors = {
        "required": _("Please answer this question."),
        "invalid_choice": _("Please choose one of the listed options."),
    }
    if q.type in ("likert", "single", "attention"):
        return forms.TypedChoiceField(
            label=label,
            choices=_choices(q, language),
            coerce=int,
            required=need,
            widget=forms.RadioSelect,
            error_messages=choice_errors,
        )
    if q.type == "multi":
        return forms.TypedMultipleChoiceField(
            label=label,
            choices=_choices(q, language),
            coerce=int,
            required=need,
            widget=forms.CheckboxSelectMultiple,
            error_messages={
                "required": _("Please select at least one option."),
                "invalid_choice": _("Please choose only listed options."),
            },
        )
    if q.type == "text":
        widget: forms.Widget = forms.Textarea(attrs={"rows": 3, "maxlength": q.max_length})
    elif q.type == "slider":
        widget = RangeInput(attrs={"min": f"{q.min:g}", "max": f"{q.max:g}", "step": f"{q.step:g}"})
    else:
        step = "1" if q.decimals == 0 else f"{10**-q.decimals:.{q.decimals}f}"
        mode = "numeric" if q.decimals == 0 else "decimal"
        widget = forms.NumberInput(
            attrs={"min": f"{q.min:g}", "max": f"{q.max:g}", "step": step, "inputmode": mode}
        )
    return AnswerField(q, label=label, required=need, widget=widget)


def question_fields(
    items: Sequence[Question], language: str, *, required: bool = True
) -> dict[str, forms.Field]:
    return {f"{FIELD_PREFIX}{q.key}": question_field(q, language, required=required) for q in items}


def question_answers(cleaned: Mapping[str, Any]) -> dict[str, Any]:
    """Item key -> answer from a form's cleaned data (unanswered items left out)."""
    return {
        k[len(FIELD_PREFIX) :]: v
        for k, v in cleaned.items()
        if k.startswith(FIELD_PREFIX) and v not in (None, "", [])
    }
