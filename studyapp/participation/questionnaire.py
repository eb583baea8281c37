"""Researcher-defined items on the participant's pages: which items a page shows, in which
order, and the check of a page's answers (each answer by its type's entry in
`definition.question_types`).

The items are the study's ``questions`` setting (`definition.questions`), read back through the
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

from studyapp.definition.errors import ConfigError
from studyapp.definition.question_types import (
    QUESTION_TYPES,
    AnswerError,
    answer_check,
    unanswered,
)
from studyapp.definition.questions import Question
from studyapp.definition.study_config import questions_read
from studyapp.models import Participant, Study

log = logging.getLogger(__name__)

S = Participant.State
#: the questionnaire page of each state that shows one
PAGE_OF_STATE = {S.QUESTIONS_PRE: "pre", S.QUESTIONS_POST: "post"}


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


def answers_check(
    items: Sequence[Question], given: Mapping[str, Any], *, timed_out: bool = False
) -> dict[str, Any]:
    """Every item's stored answer (unanswered optional items left out); a missing required
    answer (or part of one: a matrix's statement) is refused unless the page timed out.
    Raises AnswerError naming the item."""
    out: dict[str, Any] = {}
    unknown = sorted(set(given) - {q.key for q in items})
    if unknown:
        raise AnswerError(_("Unknown questions: %(keys)s.") % {"keys": ", ".join(unknown)})
    for q in items:
        try:
            value = answer_check(q, given.get(q.key))
        except AnswerError as exc:
            raise AnswerError(f"{q.label('en')}: {exc}") from None
        if q.required and not timed_out and (value is None or unanswered(q, value)):
            raise AnswerError(
                _("Please answer the question: %(label)s") % {"label": q.label("en")}
            )
        if value is None:
            continue
        out[q.key] = value
    return out


def attention_of(items: Sequence[Question]) -> list[dict[str, Any]]:
    """The attention items of a page as the attention checks' `record` reads them."""
    return [
        {"key": q.key, "answer": q.answer, "options": q.codes()}
        for q in items
        if QUESTION_TYPES[q.type].attention
    ]
