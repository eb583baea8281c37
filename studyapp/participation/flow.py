"""The order of a study's pages, as participant states: which page comes first and which
follows a given one.

Consent first (new studies): welcome -> consent -> screening -> [questionnaire] -> scenario ->
profile -> waiting -> evaluations -> [questionnaire] -> completion. Studies made before consent
came first keep screening -> consent (``page_order = "screening_first"``). The questionnaire
pages are there only when the study defines items for them. A pool-collection study has no
scenario, waiting or evaluation pages: its profile page leads to the questionnaire after it,
or to completion.
"""

from __future__ import annotations

from studyapp.models import Participant, Study
from studyapp.participation import questionnaire

S = Participant.State


def sequence(study: Study) -> list[str]:
    """The states a participant who completes the study passes through, in order."""
    head = [S.SCREENING, S.CONSENT]
    if study.page_order != "screening_first":
        head.reverse()
    pre = [S.QUESTIONS_PRE] if questionnaire.items_for(study, "pre") else []
    post = [S.QUESTIONS_POST] if questionnaire.items_for(study, "post") else []
    if study.kind == "pool_collection":
        return [*head, *pre, S.PROFILE, *post, S.COMPLETED]
    tail = [S.SCENARIO, S.PROFILE, S.WAITING, S.EVALUATING, *post, S.COMPLETED]
    return [*head, *pre, *tail]


def first_state(study: Study) -> str:
    return sequence(study)[0]


def after(study: Study, state: str) -> str:
    """The state that follows `state` in the study's order."""
    order = sequence(study)
    return order[order.index(state) + 1]


def page_rank(study: Study, key: str) -> tuple[int, int]:
    """A page key's place in the study's order (end pages last), to tell a stale form from a
    form of a page not reached yet; plan pages are ranked by their number."""
    head, _, tail = key.partition("-")
    state = S.EVALUATING if head == "evaluation" else head
    if head in ("under_review", "report"):
        # the delayed-release pages stand where the waiting page stands, the report after it
        state, tail = S.WAITING, "1" if head == "report" else "0"
    order = sequence(study)
    if state in order and state != S.COMPLETED:
        return order.index(state), int(tail) if tail.isdigit() else 0
    return len(order), 0
