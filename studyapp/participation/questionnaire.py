"""Researcher-defined items on the participant's pages: which items a page shows, in which
order, the check of their answers, and the questionnaire pages' submission.

The items are the study's ``questions`` setting (`studies.questions`), read back through the
settings model, so a stored list the console would refuse is never shown (it is logged). The
order of a page's items is the defined one, or, for a page the study randomises, a shuffle
seeded by the participant and the page, so a reload shows the same order; the order shown
is stored with the answers (`services.questionnaire_submit`, `services.evaluation_submit`).
"""

from __future__ import annotations

import functools
import json
import logging
import random
from collections.abc import Mapping, Sequence
from typing import Any

from django.utils.translation import gettext as _

from studyapp.models import Participant, Study
from studyapp.studies.config import questions_read
from studyapp.studies.errors import ConfigError
from studyapp.studies.questions import Question

log = logging.getLogger(__name__)

S = Participant.State
#: the questionnaire page of each state that shows one
PAGE_OF_STATE = {S.QUESTIONS_PRE: "pre", S.QUESTIONS_POST: "post"}


class AnswerError(ValueError):
    """An answer the item cannot take; the message is shown to the participant."""


def items_for(study: Study, page: str) -> list[Question]:
    """The study's items on a page ("pre", "post" or "evaluation"), in their defined order."""
    try:
        items = _questions_read(json.dumps(study.questions or [], sort_keys=True))
    except ConfigError as exc:
        log.error("study %s: questions not used: %s", study.slug, exc)
        return []
    return [q for q in items if q.page == page]


@functools.lru_cache(maxsize=256)
def _questions_read(stored: str) -> tuple[Question, ...]:
    """The items validated once per stored text (every page asks; the text rarely changes)."""
    return tuple(questions_read(json.loads(stored)))


def ordered(study: Study, participant_id: int, page: str, key: str) -> list[Question]:
    """A page's items in the order this participant sees them (`key`: the page key, e.g.
    "evaluation-3", so every plan page has an order of its own)."""
    items = items_for(study, page)
    if page in (study.random_item_order or []):
        random.Random(f"{study.seed}:{participant_id}:{key}").shuffle(items)
    return items


def _number(q: Question, value: Any) -> int | float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise AnswerError(_("Please enter a number.")) from None
    if number != number or not q.min <= number <= q.max:  # NaN, or out of bounds
        raise AnswerError(
            _("Please enter a number from %(lo)s to %(hi)s.")
            % {"lo": f"{q.min:g}", "hi": f"{q.max:g}"}
        )
    whole = q.type == "number" and q.decimals == 0
    if whole and number != int(number):
        raise AnswerError(_("Please enter a whole number."))
    if q.type == "number" and round(number, q.decimals) != number:
        raise AnswerError(_("Please use at most %(n)s decimal places.") % {"n": q.decimals})
    return int(number) if whole or number == int(number) else number


def _code(q: Question, value: Any) -> int:
    try:
        code = int(value)
    except (TypeError, ValueError):
        raise AnswerError(_("Please choose one of the listed options.")) from None
    if code not in q.codes():
        raise AnswerError(_("Please choose one of the listed options."))
    return code


def answer_check(q: Question, value: Any) -> Any:
    """The stored form of one answer (None: not answered); AnswerError when it cannot be."""
    empty = value is None or value == "" or value == []
    if empty:
        return None
    if q.type in ("likert", "single", "attention"):
        return _code(q, value)
    if q.type == "multi":
        values = value if isinstance(value, list | tuple) else [value]
        return sorted({_code(q, v) for v in values})
    if q.type == "text":
        if not isinstance(value, str):
            raise AnswerError(_("Please answer in words."))
        if len(value) > q.max_length:
            raise AnswerError(
                _("Please keep your answer under %(n)s characters.") % {"n": q.max_length}
            )
        return value
    return _number(q, value)


def answers_check(
    items: Sequence[Question], given: Mapping[str, Any], *, timed_out: bool = False
) -> dict[str, Any]:
    """Every item's stored answer (unanswered optional items left out); a missing required
    answer is refused unless the page timed out. Raises AnswerError naming the item."""
    out: dict[str, Any] = {}
    unknown = sorted(set(given) - {q.key for q in items})
    if unknown:
        raise AnswerError(_("Unknown questions: %(keys)s.") % {"keys": ", ".join(unknown)})
    for q in items:
        try:
            value = answer_check(q, given.get(q.key))
        except AnswerError as exc:
            raise AnswerError(f"{q.label('en')}: {exc}") from None
        if value is None:
            if q.required and not timed_out:
                raise AnswerError(
                    _("Please answer the question: %(label)s") % {"label": q.label("en")}
                )
            continue
        out[q.key] = value
    return out


def attention_of(items: Sequence[Question]) -> list[dict[str, Any]]:
    """The attention items of a page as the attention checks' `record` reads them."""
    return [
        {"key": q.key, "answer": q.answer, "options": q.codes()}
        for q in items
        if q.type == "attention"
    ]
