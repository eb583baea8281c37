"""Researcher-defined questions: the items a study adds to its own pages, as one typed model
(part of `config.StudyConfig`, so the console, the API and the services check them alike).

An item sits on a questionnaire page before the scenario (``pre``), after the evaluations
(``post``), or on every recourse evaluation page (``evaluation``). Types: ``likert`` (k
points, labelled or numbered), ``single`` and ``multi`` (options coded 1..n), ``text`` (at
most ``max_length`` characters), ``number`` (``min``..``max``, ``decimals`` places), ``slider``
(``min``..``max`` in ``step``s) and ``attention`` (an instructed-response item: one right
option, counted as the study's attention checks are). Texts come per study language
(``{"en": ..., "ja": ...}``); a blank language falls back to English. Answers are stored as
codes (choices), lists of codes (multi), numbers or text, never as labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, model_validator
from pydantic_core import PydanticCustomError

#: where an item can be shown
QUESTION_PAGES = ("pre", "post", "evaluation")
#: item types (`attention`: an instructed-response item among the others)
QUESTION_TYPES = ("likert", "single", "multi", "text", "number", "slider", "attention")
#: types answered by choosing among options
CHOICE_TYPES = ("single", "multi", "attention")
_KEY = r"^[a-z][a-z0-9_]{0,39}$"


def _problem(message: str, at: str = "") -> PydanticCustomError:
    return PydanticCustomError("question", "{problem}", {"problem": message, "at": at})


def _plain(value: str) -> str:
    if "\x00" in value:
        raise _problem("contains a NUL character")
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


Label = Annotated[str, Field(max_length=2000)]
OptionText = Annotated[str, Field(min_length=1, max_length=500)]


class LanguageText(_Strict):
    """A text per study language; blank: the English one."""

    en: Label = Field("", title="English")
    ja: Label = Field("", title="日本語 (Japanese)")


class LanguageOptions(_Strict):
    """Option labels per study language (same number in each; none in Japanese: English)."""

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
    type: Literal["likert", "single", "multi", "text", "number", "slider", "attention"]
    required: bool = True
    text: LanguageText = Field(description="The question, per language.")
    options: LanguageOptions = Field(
        default_factory=LanguageOptions,
        description="single/multi/attention: the options; likert: a label per point (or none).",
    )
    points: Annotated[int, Field(ge=2, le=11)] = Field(5, description="likert: scale points.")
    min: float | None = Field(None, description="number/slider: smallest answer.")
    max: float | None = Field(None, description="number/slider: largest answer.")
    step: Annotated[float, Field(ge=0.000001)] = Field(1, description="slider: step.")
    decimals: Annotated[int, Field(ge=0, le=6)] = Field(0, description="number: decimals.")
    max_length: Annotated[int, Field(ge=1, le=5000)] = Field(500, description="text: length.")
    answer: StrictInt | None = Field(None, description="attention: the right option (1-based).")

    @model_validator(mode="after")
    def _consistent(self) -> Question:
        for lang in ("en", "ja"):
            _plain(getattr(self.text, lang))
        if not self.text.en:
            raise _problem("needs the question in English (the fallback)", ".text.en")
        en, ja = self.options.en, self.options.ja
        if ja and len(ja) != len(en):
            raise _problem(f"{len(ja)} Japanese options for {len(en)} English ones", ".options.ja")
        if self.type in CHOICE_TYPES and len(en) < 2:
            raise _problem(f"a {self.type} item needs at least 2 options", ".options.en")
        if self.type == "likert" and en and len(en) != self.points:
            raise _problem(
                f"{len(en)} labels for {self.points} points (give one per point, or none)",
                ".options.en",
            )
        if self.type in ("number", "slider"):
            if self.min is None or self.max is None:
                raise _problem(f"a {self.type} item needs min and max", ".min")
            if self.min >= self.max:
                raise _problem(f"min {self.min:g} must be below max {self.max:g}", ".min")
        if self.type == "attention":
            if self.answer is None or not 1 <= self.answer <= len(en):
                raise _problem(f"the right option: a number 1..{len(en)}", ".answer")
            if not self.required:
                raise _problem("an attention item is always required", ".required")
        return self

    # --- what participants see -------------------------------------------------------------
    def label(self, language: str) -> str:
        return getattr(self.text, language, "") or self.text.en

    def option_labels(self, language: str) -> list[str]:
        """The options (likert: a label per point, numbered when none are given)."""
        labels = getattr(self.options, language, []) or self.options.en
        if self.type == "likert" and not labels:
            return [str(i) for i in range(1, self.points + 1)]
        return list(labels)

    def codes(self) -> list[int]:
        return list(range(1, len(self.option_labels("en")) + 1))


def unique_keys(items: Sequence[Question]) -> None:
    """Keys are export columns: each once in a study."""
    seen: set[str] = set()
    for i, q in enumerate(items):
        if q.key in seen:
            raise _problem(f"duplicate key {q.key!r}", f"[{i}].key")
        seen.add(q.key)


def read(value: Any) -> list[Question]:
    """Stored questions as models (the caller has them validated by the settings model)."""
    return [Question.model_validate(q) for q in value or []]
