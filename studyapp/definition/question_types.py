"""The question types, one table: per type its definition check, form field, answer check,
codebook entry (with the export kind) and simulated answer.

Every consumer iterates this table instead of switching on a type's name: the settings model
(`questions.Question`) checks an item's definition here, the participant pages build its
field here (researcher items, screening questions and attention checks alike), the service
checks answers here, the export and its codebook read the kind and allowed values here, and
the bots answer here. A new question type is one `QuestionType` entry in `QUESTION_TYPES`
(plus a template only for a new widget).

Screening questions come from the schema with their own names (``choice``: ``single``;
``integer``, a screening-only type); `screening.as_question` reads them as questions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from analysis import contract as c
from studyapp.definition import part_questions as pq
from studyapp.definition.question_errors import AnswerError, problem

if TYPE_CHECKING:
    import numpy as np

    from studyapp.definition.questions import Question


@dataclass(frozen=True)
class QuestionType:
    """What one question type is, to everyone who handles it."""

    name: str
    #: the type's own rules on an item's definition (raise `problem`); None: none
    check: Callable[[Question], None] | None
    #: the form field (`language`, whether an answer is needed)
    field: Callable[[Question, str, bool], forms.Field]
    #: the stored form of a given (non-empty) answer; AnswerError when it cannot be one
    answer: Callable[[Question, Any], Any]
    #: (export kind: integer, float or string; the allowed values as the codebook says them)
    codebook: Callable[[Question], tuple[str, str]]
    #: a bot's answer as the form posts it (`rng`, the bot's share of wrong attention answers)
    simulated: Callable[[Question, np.random.Generator, float], Any]
    #: answered by choosing among the options (coded 1..n); needs at least two of them
    choices: bool = False
    #: the options of an item that gives none (e.g. a Likert scale's numbered points)
    unlabelled: Callable[[Question], list[str]] | None = None
    #: free text: exported only with the free-text answers
    free_text: bool = False
    #: an instructed-response item, counted as the study's attention checks are
    attention: bool = False
    #: offered for researcher-defined items (False: screening questions only)
    researcher: bool = True
    #: the type's name in the console's editor
    title: str = ""
    #: the item settings this type reads beyond key, page, type, required and text: the
    #: console's editor shows an item of this type only these
    settings: tuple[str, ...] = ()
    #: an answer in parts (a matrix's statements, a ranking's options): (key, label in the
    #: language) per part, a mapping key -> value as the answer, an export column per part
    #: (`export_columns`), `codebook` saying each one's kind and values; None: one value
    parts: Callable[[Question, str], list[tuple[str, str]]] | None = None


# --- definition checks ---------------------------------------------------------------------------
def _likert_labels(q: Question) -> None:
    n = len(q.options.en)
    if n and n != q.points:
        raise problem(
            f"{n} labels for {q.points} points (give one per point, or none)", ".options.en"
        )


def _bounds(q: Question) -> None:
    if q.min is None or q.max is None:
        raise problem(f"a {q.type} item needs min and max", ".min")
    if q.min >= q.max:
        raise problem(f"min {q.min:g} must be below max {q.max:g}", ".min")


def _right_option(q: Question) -> None:
    n = len(q.options.en)
    if q.answer is None or not 1 <= q.answer <= n:
        raise problem(f"the right option: a number 1..{n}", ".answer")
    if not q.required:
        raise problem("an attention item is always required", ".required")


# --- form fields ----------------------------------------------------------------------------------
class RangeInput(forms.NumberInput):
    input_type = "range"


class ScaleSelect(forms.RadioSelect):
    """A rating scale's points as a radio group, which the participant pages describe by
    the scale's two ends (`participation.field_renderer.scale_anchors`)."""

    is_scale = True


class AnswerField(forms.Field):
    """A number, slider or text answer checked by the type's answer check."""

    def __init__(self, question: Question, language: str = "en", **kwargs: Any) -> None:
        self.question = question
        self.language = language
        super().__init__(**kwargs)

    def to_python(self, value: Any) -> Any:
        if isinstance(value, str):
            value = value.strip() if not QUESTION_TYPES[self.question.type].free_text else value
        return value

    def validate(self, value: Any) -> None:
        if value in self.empty_values and self.required:
            raise ValidationError(_("Please answer this question."), code="required")

    def clean(self, value: Any) -> Any:
        value = self.to_python(value)
        self.validate(value)
        try:
            answer = answer_check(self.question, value)
        except AnswerError as exc:
            raise ValidationError(str(exc), code="invalid") from None
        left = unanswered(self.question, answer, self.language)
        if self.required and answer is not None and left:
            message = _("Please answer each of: %(parts)s") % {"parts": "; ".join(left)}
            raise ValidationError(message, code="required")
        return answer


def _choices(q: Question, language: str) -> list[tuple[int, str]]:
    return list(enumerate(q.option_labels(language), start=1))


def _numbered_choices(q: Question, language: str) -> list[tuple[int, str]]:
    """Likert points with their labels numbered (points without labels are numbers)."""
    labels = q.option_labels(language)
    if q.option_labels("en") != [str(i) for i in q.codes()]:
        return [(i, f"{i}. {label}") for i, label in enumerate(labels, start=1)]
    return list(enumerate(labels, start=1))


def _radio_field(
    choices: Callable[[Question, str], list[tuple[int, str]]],
    widget: type[forms.RadioSelect] = forms.RadioSelect,
) -> Callable[[Question, str, bool], forms.Field]:
    def field(q: Question, language: str, required: bool) -> forms.Field:
        return forms.TypedChoiceField(
            label=q.label(language),
            choices=choices(q, language),
            coerce=int,
            required=required,
            widget=widget,
            error_messages={
                "required": _("Please answer this question."),
                "invalid_choice": _("Please choose one of the listed options."),
            },
        )

    return field


def _boxes_field(q: Question, language: str, required: bool) -> forms.Field:
    return forms.TypedMultipleChoiceField(
        label=q.label(language),
        choices=_choices(q, language),
        coerce=int,
        required=required,
        widget=forms.CheckboxSelectMultiple,
        error_messages={
            "required": _("Please select at least one option."),
            "invalid_choice": _("Please choose only listed options."),
        },
    )


def _text_field(q: Question, language: str, required: bool) -> forms.Field:
    widget = forms.Textarea(attrs={"rows": 3, "maxlength": q.max_length})
    return AnswerField(q, label=q.label(language), required=required, widget=widget)


def _slider_field(q: Question, language: str, required: bool) -> forms.Field:
    widget = RangeInput(attrs={"min": f"{q.min:g}", "max": f"{q.max:g}", "step": f"{q.step:g}"})
    return AnswerField(q, label=q.label(language), required=required, widget=widget)


def _parts_field(
    widget: Callable[[Question, str], forms.Widget],
) -> Callable[[Question, str, bool], forms.Field]:
    def field(q: Question, language: str, required: bool) -> forms.Field:
        return AnswerField(
            q, language, label=q.label(language), required=required, widget=widget(q, language)
        )

    return field


def _number_field(q: Question, language: str, required: bool) -> forms.Field:
    step = "1" if q.decimals == 0 else f"{10**-q.decimals:.{q.decimals}f}"
    mode = "numeric" if q.decimals == 0 else "decimal"
    widget = forms.NumberInput(
        attrs={"min": f"{q.min:g}", "max": f"{q.max:g}", "step": step, "inputmode": mode}
    )
    return AnswerField(q, label=q.label(language), required=required, widget=widget)


def _integer_field(q: Question, language: str, required: bool) -> forms.Field:
    """A screening question's whole number (the schema's bounds, as written there)."""
    between = _("Please enter a number from %(lo)s to %(hi)s.") % {"lo": q.min, "hi": q.max}
    return forms.IntegerField(
        label=q.label(language),
        min_value=q.min,
        max_value=q.max,
        required=required,
        error_messages={
            "required": _("Please answer this question."),
            "invalid": _("Please enter a whole number."),
            "min_value": between,
            "max_value": between,
        },
        widget=forms.NumberInput(attrs={"inputmode": "numeric"}),
    )


# --- answer checks --------------------------------------------------------------------------------
def answer_check(q: Question, value: Any) -> Any:
    """The stored form of one answer (None: not answered); AnswerError when it cannot be."""
    if value is None or value == "" or value == [] or value == {}:
        return None
    return QUESTION_TYPES[q.type].answer(q, value)


def unanswered(q: Question, answer: Any, language: str = "en") -> list[str]:
    """The parts an answer in parts leaves out (their labels); [] for any other answer."""
    parts = QUESTION_TYPES[q.type].parts
    if parts is None or not isinstance(answer, dict):
        return []
    return [label for key, label in parts(q, language) if key not in answer]


def _code(q: Question, value: Any) -> int:
    try:
        code = int(value)
    except (TypeError, ValueError):
        raise AnswerError(_("Please choose one of the listed options.")) from None
    if code not in q.codes():
        raise AnswerError(_("Please choose one of the listed options."))
    return code


def _codes(q: Question, value: Any) -> list[int]:
    values = value if isinstance(value, list | tuple) else [value]
    return sorted({_code(q, v) for v in values})


def _text(q: Question, value: Any) -> str:
    if not isinstance(value, str):
        raise AnswerError(_("Please answer in words."))
    if len(value) > q.max_length:
        raise AnswerError(
            _("Please keep your answer under %(n)s characters.") % {"n": q.max_length}
        )
    return value


def _in_bounds(q: Question, value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise AnswerError(_("Please enter a number.")) from None
    if number != number or not q.min <= number <= q.max:  # NaN, or out of bounds
        raise AnswerError(
            _("Please enter a number from %(lo)s to %(hi)s.")
            % {"lo": f"{q.min:g}", "hi": f"{q.max:g}"}
        )
    return number


def _number(q: Question, value: Any) -> int | float:
    """A number within the bounds with at most the item's decimals (0: a whole number)."""
    number = _in_bounds(q, value)
    whole = q.decimals == 0
    if whole and number != int(number):
        raise AnswerError(_("Please enter a whole number."))
    if round(number, q.decimals) != number:
        raise AnswerError(_("Please use at most %(n)s decimal places.") % {"n": q.decimals})
    return int(number) if whole or number == int(number) else number


def _slider(q: Question, value: Any) -> int | float:
    number = _in_bounds(q, value)
    return int(number) if number == int(number) else number


# --- codebook entries -----------------------------------------------------------------------------
def _coded(q: Question) -> tuple[str, str]:
    return "integer", c.labels(q.option_labels("en"))


def _coded_many(q: Question) -> tuple[str, str]:
    return "string", c.labels(q.option_labels("en")) + " (codes ';'-joined)"


def _free_text(q: Question) -> tuple[str, str]:
    return "string", f"free text, at most {q.max_length} characters"


def _bounded(q: Question) -> tuple[str, str]:
    return "integer" if q.decimals == 0 else "float", f"{q.min:g}..{q.max:g}"


def _stepped(q: Question) -> tuple[str, str]:
    return "float", f"{q.min:g}..{q.max:g} in steps of {q.step:g}"


def _instructed(q: Question) -> tuple[str, str]:
    kind, allowed = _coded(q)
    return kind, f"{allowed} (right answer: {q.answer})"


# --- simulated answers ----------------------------------------------------------------------------
def _pick(q: Question, rng: np.random.Generator, error_rate: float) -> str:
    return str(int(rng.choice(q.codes())))


def _pick_some(q: Question, rng: np.random.Generator, error_rate: float) -> list[str]:
    k = int(rng.integers(1, len(q.codes()) + 1))
    return [str(int(code)) for code in sorted(rng.choice(q.codes(), size=k, replace=False))]


def _write(q: Question, rng: np.random.Generator, error_rate: float) -> str:
    return "simulated answer"[: q.max_length]


def _slide(q: Question, rng: np.random.Generator, error_rate: float) -> str:
    lo, hi = float(q.min), float(q.max)
    steps = int((hi - lo) // q.step)
    return f"{lo + q.step * int(rng.integers(0, steps + 1)):g}"


def _enter(q: Question, rng: np.random.Generator, error_rate: float) -> str:
    value = round(float(rng.uniform(float(q.min), float(q.max))), q.decimals)
    return str(int(value)) if q.decimals == 0 else f"{value:.{q.decimals}f}"


def _follow(q: Question, rng: np.random.Generator, error_rate: float) -> str:
    """The right option, or another one with probability `error_rate`."""
    right = int(q.answer or 1)
    wrong = rng.random() < error_rate
    return str(right % len(q.codes()) + 1 if wrong else right)


#: every question type by name; researcher items may use those marked `researcher`
QUESTION_TYPES: dict[str, QuestionType] = {
    t.name: t
    for t in (
        QuestionType(
            "likert", _likert_labels, _radio_field(_numbered_choices, ScaleSelect), _code,
            _coded, _pick,
            unlabelled=lambda q: [str(i) for i in range(1, q.points + 1)],
            title="Likert scale", settings=("points", "options"),
        ),
        QuestionType(
            "single", None, _radio_field(_choices), _code, _coded, _pick, choices=True,
            title="Single choice", settings=("options",),
        ),
        QuestionType(
            "multi", None, _boxes_field, _codes, _coded_many, _pick_some, choices=True,
            title="Multiple choice", settings=("options",),
        ),
        QuestionType(
            "text", None, _text_field, _text, _free_text, _write, free_text=True,
            title="Free text", settings=("max_length",),
        ),
        QuestionType(
            "number", _bounds, _number_field, _number, _bounded, _enter,
            title="Number", settings=("min", "max", "decimals"),
        ),
        QuestionType(
            "slider", _bounds, _slider_field, _slider, _stepped, _slide,
            title="Slider", settings=("min", "max", "step"),
        ),
        QuestionType(
            "attention", _right_option, _radio_field(_choices), _code, _instructed, _follow,
            choices=True, attention=True,
            title="Attention check (one right option)", settings=("options", "answer"),
        ),
        QuestionType(
            "matrix", pq.matrix_check, _parts_field(pq.matrix_widget), pq.matrix_answer,
            pq.matrix_codebook, pq.matrix_simulated, choices=True, parts=pq.matrix_parts,
            title="Matrix (statements rated on one scale)",
            settings=("options", "rows", "row_keys"),
        ),
        QuestionType(
            "ranking", pq.ranking_check, _parts_field(pq.ranking_widget),
            pq.ranking_answer, pq.ranking_codebook, pq.ranking_simulated, choices=True,
            parts=pq.ranking_parts, title="Ranking (order the options)",
            settings=("options", "option_keys"),
        ),
        QuestionType(
            "integer", _bounds, _integer_field, _number, _bounded, _enter, researcher=False
        ),
    )
}  # fmt: skip


def researcher_types() -> list[str]:
    """The types a researcher-defined item may have, in the table's order."""
    return [name for name, t in QUESTION_TYPES.items() if t.researcher]


def export_kind(q: Question) -> str:
    """integer, float or string: how the item's answers are exported (each part's, for an
    answer in parts)."""
    return QUESTION_TYPES[q.type].codebook(q)[0]


def export_columns(q: Question) -> list[tuple[str, str]]:
    """(column key, English label) of each export column the item's answers fill: its key,
    or ``<key>_<part>`` per part (the export prefixes ``q_``)."""
    parts = QUESTION_TYPES[q.type].parts
    if parts is None:
        return [(q.key, q.label("en"))]
    return [(f"{q.key}_{key}", f"{q.label('en')} [{label}]") for key, label in parts(q, "en")]


def export_cells(q: Question, answer: Any) -> dict[str, Any]:
    """Column key -> the stored answer's value in that column (None: not answered)."""
    if QUESTION_TYPES[q.type].parts is None:
        return {q.key: answer}
    given = answer if isinstance(answer, dict) else {}
    return {column: given.get(column[len(q.key) + 1 :]) for column, _ in export_columns(q)}
