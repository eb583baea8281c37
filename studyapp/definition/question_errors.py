"""The two refusals of the question types: a definition error of an item (with its path) and
an answer an item cannot take. Apart from the table (`question_types`) so that the modules
of its entries (`part_questions`) raise them too."""

from __future__ import annotations

from pydantic_core import PydanticCustomError


class AnswerError(ValueError):
    """An answer the item cannot take; the message is shown to the participant."""


def problem(message: str, at: str = "") -> PydanticCustomError:
    """A definition error of an item; `at` extends its path (e.g. ".options.en")."""
    return PydanticCustomError("question", "{problem}", {"problem": message, "at": at})
