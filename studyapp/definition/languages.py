"""The languages a study runs in: which codes exist, the `languages` setting (the default
first), and attention checks' texts in the study's other languages.

A study may run in any language the participant pages are translated into: English, the
language the platform's own words are written in, and every locale under `studyapp/locale`
with a compiled catalogue. A code without one would show participants the platform's
buttons and messages in English beside the study's own texts, so it is refused by name.
Pure settings code (pydantic, no ORM): `study_config.StudyConfig` calls it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError

#: the language the platform's own words (and a schema's base labels) are written in
SOURCE_LANGUAGE = "en"
LOCALE_DIR = Path(__file__).resolve().parents[1] / "locale"
#: a study's languages, at most
MAX_LANGUAGES = 10


def _problem(message: str, at: str = "") -> PydanticCustomError:
    return PydanticCustomError("language", "{problem}", {"problem": message, "at": at})


@functools.cache
def page_languages() -> tuple[str, ...]:
    """English, then every locale with a compiled catalogue of the participant pages."""
    found = sorted(p.parent.parent.name for p in LOCALE_DIR.glob("*/LC_MESSAGES/django.mo"))
    return (SOURCE_LANGUAGE, *(code for code in found if code != SOURCE_LANGUAGE))


def language_problem(code: str) -> str | None:
    """Why `code` cannot be a study's language (None when it can)."""
    if code in page_languages():
        return None
    return (
        f"{code!r} is not a language the participant pages are translated into "
        f"(one of: {', '.join(page_languages())})"
    )


def languages_settled(languages: Sequence[str], default: str) -> list[str]:
    """The `languages` setting with the default first; an unknown or repeated code, or a
    default missing from a list of several, is refused with its path."""
    seen: list[str] = []
    for i, code in enumerate(languages):
        problem = language_problem(code)
        if problem is None and code in seen:
            problem = f"{code!r} is listed twice"
        if problem is not None:
            raise _problem(problem, f"languages[{i}]")
        seen.append(code)
    if len(seen) <= 1:
        return [default]  # a single-language study follows its default
    if default not in seen:
        raise _problem(
            f"the default language {default!r} (setting `language`) is not among them",
            "languages",
        )
    return [default, *(code for code in seen if code != default)]


class AttentionTexts(BaseModel):
    """An attention check's prompt and options in one of the study's other languages (the
    check's own `prompt` and `options` are in the study's default language)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, title="Translation")

    prompt: Annotated[str, Field(min_length=1, max_length=2000)]
    options: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=500)]],
        Field(min_length=2, max_length=20),
    ]


def attention_translations_checked(
    value: dict[str, AttentionTexts], options: Sequence[str] | None
) -> dict[str, AttentionTexts]:
    """Translations under known language codes, each with as many options as the check."""
    for code, texts in value.items():
        problem = language_problem(code)
        if problem is not None:
            raise _problem(problem, f".{code}")
        if options is not None and len(texts.options) != len(options):
            raise _problem(
                f"{len(texts.options)} options for the check's {len(options)}", f".{code}.options"
            )
    return value
