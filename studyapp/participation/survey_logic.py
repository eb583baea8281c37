"""Survey logic for one participant (`definition.logic`), evaluated on the server: which of a
page's items they are shown, the texts with their earlier answers piped in, and whether a
page's answers end the study (a screener).

A page builds its form from the items shown (`page_items`), and the service that stores the
page checks the answers against the same items (`shown`), so a hidden question is neither
asked nor accepted, and a hidden required question is not required.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from studyapp import text_placeholders
from studyapp.definition import engine_objects, logic, screening
from studyapp.definition.questions import QUESTION_PAGES, Question
from studyapp.models import Participant, Profile, Study
from studyapp.participation import questionnaire
from studyapp.participation.forms import localized_schema


def answers_known(participant: Participant, new: Mapping[str, Any] | None = None) -> dict:
    """The participant's answers by the names conditions and texts use (``q.age``,
    ``screening.income``, ``profile.position``); `new`: a page's answers not stored yet."""
    try:
        profile = participant.profile.values or {}
    except Profile.DoesNotExist:
        profile = {}
    return {
        **{f"screening.{k}": v for k, v in (participant.screening or {}).items()},
        **{f"profile.{k}": v for k, v in profile.items()},
        **{f"q.{k}": v for k, v in {**(participant.answers or {}), **(new or {})}.items()},
    }


def shown(participant: Participant, items: Sequence[Question]) -> list[Question]:
    """The items shown to the participant (those without a condition, and those whose
    condition their earlier answers meet), in the order given."""
    if not any(q.show_if.is_set() for q in items):
        return list(items)
    answers = answers_known(participant)
    return [q for q in items if logic.is_shown(q, answers)]


def page_items(participant: Participant, page: str, key: str, language: str) -> list[Question]:
    """A page's items as the participant sees them: in their order (`questionnaire.ordered`),
    the hidden ones left out, earlier answers piped into the questions' texts (labels of
    choices in the participant's `language`)."""
    items = shown(participant, questionnaire.ordered(participant.study, participant.pk, page, key))
    if not any(text_placeholders.answer_names(q.label(language)) for q in items):
        return items
    table = sources_of(participant.study, language)
    answers = answers_known(participant)
    return [_piped(q, answers, table) for q in items]


def _piped(q: Question, answers: Mapping[str, Any], table: Mapping[str, logic.Source]) -> Question:
    """The item with the answers its text names filled in, in every language."""
    texts = {lang: logic.pipe(str(t), answers, table) for lang, t in q.text.model_dump().items()}
    return q.model_copy(update={"text": q.text.model_copy(update=texts)})


def piped_texts(
    participant: Participant, texts: Mapping[str, str], language: str
) -> Mapping[str, str]:
    """The page texts with the participant's earlier answers filled in (`{q.age}`)."""
    if not any(text_placeholders.answer_names(str(t)) for t in texts.values()):
        return texts
    table = sources_of(participant.study, language)
    answers = answers_known(participant)
    return {k: logic.pipe(str(v), answers, table) for k, v in texts.items()}


def ending(participant: Participant, items: Sequence[Question], new: Mapping[str, Any]) -> str:
    """The end state a page's answers (`new`, to its shown `items`) lead to by an end rule
    ("" when none applies)."""
    if not any(q.end_if.is_set() for q in items):
        return ""
    return logic.ending(items, answers_known(participant, new)) or ""


def sources_of(study: Study, language: str) -> dict[str, logic.Source]:
    """Every answer the study's conditions and texts can name (`logic.sources`), with labels
    in `language` (the schema's translation, when it has one)."""
    schema = localized_schema(study.schema, language)
    items = [q for page in QUESTION_PAGES for q in questionnaire.items_for(study, page)]
    return logic.sources(
        items,
        screening=screening.questions(schema),
        items=engine_objects.schema_of(schema).items,
        language=language,
    )
