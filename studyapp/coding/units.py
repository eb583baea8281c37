"""The answers a study's coders code, and how they are named.

A unit is one free-text field of one evaluation, named `<recourse id>:<field>` as in
`analysis.coding` (the export's recourse ids). The fields are the two "why" answers and the
evaluation page's researcher-defined text items (`q_<key>`); test participants' answers
(previews, bots) are left out, as the export leaves them out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from studyapp.definition.question_types import QUESTION_TYPES
from studyapp.models import Evaluation, Study
from studyapp.participation.questionnaire import items_for

#: the "why" answers and the rating each one explains
WHY_FIELDS = {"acceptance_why": "acceptance", "action_why": "action"}
QUESTION_PREFIX = "q_"


def answer_fields(study: Study) -> list[str]:
    """The fields of a study that hold free text."""
    items = items_for(study, "evaluation")
    texts = [f"{QUESTION_PREFIX}{q.key}" for q in items if QUESTION_TYPES[q.type].free_text]
    return [*WHY_FIELDS, *texts]


def rating_field(field: str) -> str:
    """The rating an answer explains (a researcher item's answer: the acceptance rating)."""
    return WHY_FIELDS.get(field, "acceptance")


def unit_name(recourse_id: int, field: str) -> str:
    return f"{recourse_id}:{field}"


def answer_text(evaluation: Evaluation, field: str) -> str:
    if field in WHY_FIELDS:
        return str(getattr(evaluation, field) or "").strip()
    value: Any = (evaluation.answers or {}).get(field[len(QUESTION_PREFIX) :], "")
    return str(value or "").strip()


def evaluations_of(study: Study) -> QuerySet[Evaluation]:
    """The study's evaluations that hold answers to code (no test participant's)."""
    return (
        Evaluation.objects.filter(participant__study=study, participant__is_test=False)
        .select_related("recourse", "participant", "participant__profile")
        .order_by("participant_id", "recourse__position")
    )


@dataclass(frozen=True)
class Answer:
    """One coding unit with what a coder reads beside it."""

    evaluation: Evaluation
    field: str
    text: str

    @property
    def unit(self) -> str:
        return unit_name(self.evaluation.recourse_id, self.field)

    @property
    def rating(self) -> int:
        return int(getattr(self.evaluation, rating_field(self.field)))


def answers_of(evaluations: QuerySet[Evaluation], fields: list[str]) -> list[Answer]:
    """The non-empty answers of `fields` in these evaluations, in export order."""
    out = []
    for ev in evaluations:
        for f in fields:
            text = answer_text(ev, f)
            if text:
                out.append(Answer(ev, f, text))
    return out
