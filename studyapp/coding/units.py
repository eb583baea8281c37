"""The answers a study's coders code, and how they are named.

A unit is one free-text field of one evaluation, named `<recourse id>:<field>` as in
`analysis.coding` (the export's recourse ids), or of one participant's questionnaire (a text
item before or after the plans), named `p<participant id>:<field>` (the export's participant
id). The evaluation fields are the plan page's two "why" answers and its researcher-defined
text items (`q_<key>`); the participant fields are the questionnaire's text items
(`q_<key>`; keys are unique in a study). Which of them are coded is the study's choice
(`CodingSettings.fields`, empty: all). Test participants' answers (previews, bots) are left
out, as the export leaves them out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Q, QuerySet

from studyapp.coding.history_models import CodingSettings
from studyapp.definition.question_types import QUESTION_TYPES
from studyapp.models import Evaluation, Participant, Study
from studyapp.participation.questionnaire import items_for

#: the "why" answers and the rating each one explains
WHY_FIELDS = {"acceptance_why": "acceptance", "action_why": "action"}
QUESTION_PREFIX = "q_"
EVALUATION, PARTICIPANT = "evaluation", "participant"


@dataclass(frozen=True)
class TextField:
    """A free-text field: its name, whether it is answered per plan or once per participant,
    and the page it is on."""

    name: str
    level: str
    page: str
    label: str


def all_fields(study: Study) -> list[TextField]:
    """Every free-text field of the study, plan page first, then before and after the plans."""
    out = [TextField(f, EVALUATION, "evaluation", f) for f in WHY_FIELDS]
    for page, level in (("evaluation", EVALUATION), ("pre", PARTICIPANT), ("post", PARTICIPANT)):
        for q in items_for(study, page):
            if QUESTION_TYPES[q.type].free_text:
                label = f"{QUESTION_PREFIX}{q.key} ({page}: {q.text.en or q.key})"
                out.append(TextField(f"{QUESTION_PREFIX}{q.key}", level, page, label[:80]))
    return out


def chosen_fields(study: Study) -> list[TextField]:
    """The fields the study codes (its settings' choice; none chosen: every field)."""
    fields = all_fields(study)
    chosen = CodingSettings.objects.filter(study=study).values_list("fields", flat=True).first()
    return [f for f in fields if f.name in chosen] if chosen else fields


def answer_fields(study: Study) -> list[str]:
    """The names of the fields the study codes."""
    return [f.name for f in chosen_fields(study)]


def field_named(study: Study, name: str) -> TextField | None:
    return next((f for f in chosen_fields(study) if f.name == name), None)


def rating_field(field: str) -> str:
    """The rating an answer explains (a researcher item's answer: the acceptance rating)."""
    return WHY_FIELDS.get(field, "acceptance")


def unit_name(recourse_id: int, field: str) -> str:
    return f"{recourse_id}:{field}"


def participant_unit(participant_id: int, field: str) -> str:
    return f"p{participant_id}:{field}"


def answer_text(holder: Evaluation | Participant, field: str) -> str:
    """The answer in `field` of an evaluation or a participant ('' when none)."""
    if field in WHY_FIELDS:
        return str(getattr(holder, field, "") or "").strip()
    value: Any = (holder.answers or {}).get(field[len(QUESTION_PREFIX) :], "")
    return str(value or "").strip()


def evaluations_of(study: Study) -> QuerySet[Evaluation]:
    """The study's evaluations that hold answers to code (no test participant's)."""
    return (
        Evaluation.objects.filter(participant__study=study, participant__is_test=False)
        .select_related("recourse", "participant", "participant__profile")
        .order_by("participant_id", "recourse_id")  # a participant's plans in position order
    )


def participants_of(study: Study) -> QuerySet[Participant]:
    """The study's participants whose questionnaire answers are coded (no test participant)."""
    return Participant.objects.filter(study=study, is_test=False).order_by("pk")


def answered(field: str) -> Q:
    """The rows (evaluations or participants) with a non-empty answer in `field`."""
    if field in WHY_FIELDS:
        return ~Q(**{field: ""})
    key = field[len(QUESTION_PREFIX) :]
    return Q(answers__has_key=key) & ~Q(**{f"answers__{key}": ""}) & ~Q(**{f"answers__{key}": None})


@dataclass(frozen=True)
class Answer:
    """One coding unit with what a coder reads beside it; `evaluation` is None for a
    questionnaire answer."""

    participant: Participant
    evaluation: Evaluation | None
    field: str
    text: str

    @property
    def unit(self) -> str:
        if self.evaluation is None:
            return participant_unit(self.participant.pk, self.field)
        return unit_name(self.evaluation.recourse_id, self.field)

    @property
    def rating(self) -> int | None:
        if self.evaluation is None:
            return None
        return int(getattr(self.evaluation, rating_field(self.field)))

    @property
    def key(self) -> tuple[int | None, int, str]:
        """(evaluation id or None, participant id, field): how the tables find the unit."""
        ev = self.evaluation.pk if self.evaluation is not None else None
        return (ev, self.participant.pk, self.field)


def answers_of(evaluations: QuerySet[Evaluation], fields: list[str]) -> list[Answer]:
    """The non-empty answers of the evaluation `fields` in these evaluations, in export order."""
    out = []
    for ev in evaluations:
        for f in fields:
            text = answer_text(ev, f)
            if text:
                out.append(Answer(ev.participant, ev, f, text))
    return out
