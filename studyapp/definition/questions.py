"""Researcher-defined questions: the items a study adds to its own pages, as one typed model
(part of `study_config.StudyConfig`, so the console, the API and the services check them alike).

An item sits on a questionnaire page before the scenario (``pre``), after the evaluations
(``post``), or on every recourse evaluation page (``evaluation``). Types: ``likert`` (k
points, labelled or numbered), ``single`` and ``multi`` (options coded 1..n), ``text`` (at
most ``max_length`` characters), ``number`` (``min``..``max``, ``decimals`` places), ``slider``
(``min``..``max`` in ``step``s), ``attention`` (an instructed-response item: one right
option, counted as the study's attention checks are), ``matrix`` (statements, ``rows`` with a
key each, rated on the ``options`` as one scale) and ``ranking`` (the ``options``, with a key
each, put in order). Texts come per study language
(``{"en": ..., "ja": ...}``); a blank language falls back to English. Answers are stored as
codes (choices), lists of codes (multi), numbers, text, or a mapping part key -> code or
rank (matrix, ranking), never as labels. What each type
asks, checks, exports and simulates is its entry in `question_types.QUESTION_TYPES`; when
it is shown and whether its answer ends the study (`show_if`, `end_if`) is `logic`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictInt, model_validator

from studyapp.definition.logic import Condition, EndsWith
from studyapp.definition.question_types import QUESTION_TYPES, export_columns, researcher_types
from studyapp.definition.question_types import problem as _problem

#: where an item can be shown
QUESTION_PAGES = ("pre", "post", "evaluation")
_KEY = r"^[a-z][a-z0-9_]{0,39}$"


def _plain(value: str) -> str:
    if "\x00" in value:
        raise _problem("contains a NUL character")
    return value


def _known_type(value: str) -> str:
    """One of the question types a researcher may use (`question_types.QUESTION_TYPES`)."""
    names = researcher_types()
    if value not in names:
        expected = " or ".join([", ".join(repr(n) for n in names[:-1]), repr(names[-1])])
        raise _problem(f"{value!r} is not one of {expected}")
    return value


def _type_enum(schema: dict[str, Any]) -> None:
    schema["enum"] = researcher_types()


QuestionTypeName = Annotated[str, AfterValidator(_known_type)]
#: a matrix statement's or a ranking option's key: its export column q_<key>_<part key>
PartKey = Annotated[str, Field(pattern=_KEY)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


Label = Annotated[str, Field(max_length=2000)]
OptionText = Annotated[str, Field(min_length=1, max_length=500)]


class LanguageText(_Strict):
    """A text per study language; blank: the English one."""

    model_config = ConfigDict(title="Text per language")

    en: Label = Field("", title="English")
    ja: Label = Field("", title="日本語 (Japanese)")


class LanguageOptions(_Strict):
    """Option labels per study language (same number in each; none in Japanese: English)."""

    model_config = ConfigDict(title="Options per language")

    en: Annotated[list[OptionText], Field(max_length=30)] = Field(
        default_factory=list, title="English"
    )
    ja: Annotated[list[OptionText], Field(max_length=30)] = Field(
        default_factory=list, title="日本語 (Japanese)"
    )


class Question(_Strict):
    """One researcher-defined item."""

    model_config = ConfigDict(title="Question")

    key: Annotated[str, Field(pattern=_KEY, description="Column q_<key> in the export.")]
    page: Literal["pre", "post", "evaluation"] = Field(
        description="pre: before the scenario; post: after the evaluations; evaluation: on "
        "each plan's page."
    )
    type: QuestionTypeName = Field(json_schema_extra=_type_enum)
    required: bool = True
    text: LanguageText = Field(title="Question", description="The question, per language.")
    options: LanguageOptions = Field(
        default_factory=LanguageOptions,
        title="Options",
        description="single/multi/attention: the options; likert: a label per point (or none).",
    )
    points: Annotated[int, Field(ge=2, le=11)] = Field(5, description="likert: scale points.")
    min: float | None = Field(None, description="number/slider: smallest answer.")
    max: float | None = Field(None, description="number/slider: largest answer.")
    step: Annotated[float, Field(ge=0.000001)] = Field(1, description="slider: step.")
    decimals: Annotated[int, Field(ge=0, le=6)] = Field(0, description="number: decimals.")
    max_length: Annotated[int, Field(ge=1, le=5000)] = Field(500, description="text: length.")
    answer: StrictInt | None = Field(None, description="attention: the right option (1-based).")
    rows: LanguageOptions = Field(
        default_factory=LanguageOptions,
        title="Statements",
        description="matrix: the statements (rows), each rated on the options as its scale.",
    )
    row_keys: Annotated[list[PartKey], Field(max_length=30)] = Field(
        default_factory=list,
        title="Statement keys",
        description="matrix: a key per statement (export column q_<key>_<statement key>).",
    )
    option_keys: Annotated[list[PartKey], Field(max_length=30)] = Field(
        default_factory=list,
        title="Option keys",
        description="ranking: a key per option (export column q_<key>_<option key>: its rank).",
    )
    show_if: Condition = Field(
        default_factory=Condition,
        title="Shown only when",
        description="Earlier answers (q.<key>, screening.<key>, profile.<item>) that must meet "
        "this for the question to be shown (none: always shown).",
    )
    end_if: Condition = Field(
        default_factory=Condition,
        title="Ends the study when",
        description="A screener: when its answers meet this, the study ends with ends_with.",
    )
    ends_with: EndsWith = Field("screened_out", title="Ending", description="end_if's outcome.")

    @model_validator(mode="after")
    def _consistent(self) -> Question:
        for lang in ("en", "ja"):
            _plain(getattr(self.text, lang))
        if not self.text.en:
            raise _problem("needs the question in English (the fallback)", ".text.en")
        for name, texts in (("options", self.options), ("rows", self.rows)):
            if texts.ja and len(texts.ja) != len(texts.en):
                raise _problem(
                    f"{len(texts.ja)} Japanese {name} for {len(texts.en)} English ones",
                    f".{name}.ja",
                )
        en = self.options.en
        kind = QUESTION_TYPES[self.type]
        if kind.choices and len(en) < 2:
            raise _problem(f"a {self.type} item needs at least 2 options", ".options.en")
        if kind.check is not None:
            kind.check(self)
        return self

    # --- what participants see -------------------------------------------------------------
    def label(self, language: str) -> str:
        return getattr(self.text, language, "") or self.text.en

    def option_labels(self, language: str) -> list[str]:
        """The options (likert: a label per point, numbered when none are given)."""
        labels = _listed(self.options, language)
        unlabelled = QUESTION_TYPES[self.type].unlabelled
        if unlabelled is not None and not labels:
            return unlabelled(self)
        return list(labels)

    def row_labels(self, language: str) -> list[str]:
        """A matrix's statements."""
        return _listed(self.rows, language)

    def codes(self) -> list[int]:
        return list(range(1, len(self.option_labels("en")) + 1))


def _listed(texts: LanguageOptions, language: str) -> list[str]:
    """A list of texts in `language` (none given: the English ones)."""
    return list(getattr(texts, language, []) or texts.en)


def unique_keys(items: Sequence[Question]) -> None:
    """Keys name export columns (q_<key>, or q_<key>_<part> per part): each once in a study."""
    seen: dict[str, str] = {}
    for i, q in enumerate(items):
        if q.key in seen.values():
            raise _problem(f"duplicate key {q.key!r}", f"[{i}].key")
        for column, _label in export_columns(q):
            if column in seen:
                raise _problem(
                    f"export column q_{column} is taken by item {seen[column]!r}", f"[{i}].key"
                )
            seen[column] = q.key


def read(value: Any) -> list[Question]:
    """Stored questions as models (the caller has them validated by the settings model)."""
    return [Question.model_validate(q) for q in value or []]


#: the fields `Question.model_construct` fills from a factory, with their factories:
#: pydantic reads a factory's signature each time it calls one there (for `list`, by
#: parsing its text signature), which made most of a screening page's own work, so `asked`
#: calls them itself
_FACTORIES = tuple(
    (name, field.default_factory)
    for name, field in Question.model_fields.items()
    if field.default_factory is not None
)


def asked(
    *, key: str, type: str, label: str, options: Sequence[str] = (), **settings: Any
) -> Question:
    """A question asked outside the researcher's questionnaire (a screening question, an
    attention check) in the words it is given, for its type's field, answer check and
    simulated answer. Not validated: its definition was checked where it is kept."""
    given: dict[str, Any] = {
        "key": key,
        "type": type,
        "text": LanguageText.model_construct(en=label, ja=""),
        "options": LanguageOptions.model_construct(en=[str(o) for o in options], ja=[]),
        **settings,
    }
    made = {name: make() for name, make in _FACTORIES if name not in given}  # type: ignore[call-arg]
    return Question.model_construct(set(given), **given, **made)  # the set: what was given


def attention_question(check: Mapping[str, Any]) -> Question:
    """An attention check (`study_config.AttentionCheck`) as the attention question it is."""
    return asked(
        key=check["key"],
        type="attention",
        label=check["prompt"],
        options=check["options"],
        answer=check["answer"],
    )
