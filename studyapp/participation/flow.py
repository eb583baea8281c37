"""The page flow, declared once: the sequence of page classes a participant walks (oTree's
``page_sequence``), each saying itself when it is shown (`pages`).

A study's flow is the pages it displays, in this order: for new studies welcome -> consent ->
screening -> [questionnaire] -> scenario -> profile -> decision (the model's rejection, read
while the plans are generated) -> [waiting] (or, with delayed release, under review -> report)
-> evaluations -> [questionnaire] -> the end page; an approved profile takes the study's
approved branch (its own ending, or the hypothetical rejection's decision page). A page follows the
one before it in the study's flow, and every transition service is told which state that is
(`after`); endings other than completion are branches a service takes (screened out, quota
full, failed attention, ...: `definition.outcomes`). Adding a page is one entry here plus its
class.
"""

from __future__ import annotations

from studyapp.definition import outcomes
from studyapp.models import Participant, Study
from studyapp.participation import pages as p

SEQUENCE: tuple[type[p.Page], ...] = (
    p.ConsentPage,
    p.ScreeningPage,
    p.LateConsentPage,
    p.QuestionsPrePage,
    p.ScenarioPage,
    p.ProfilePage,
    p.DecisionPage,
    p.UnderReviewPage,
    p.WaitingPage,
    p.ReportPage,
    p.EvaluationPage,
    p.QuestionsPostPage,
    p.EndPage,
)

#: an evaluation page's key names its plan: evaluation-1 .. evaluation-100
MAX_PLANS = 100


def pages_of(study: Study) -> list[type[p.Page]]:
    """The pages of the study's flow, in order."""
    return [cls for cls in SEQUENCE if cls.is_displayed(study)]


def states(study: Study) -> list[str]:
    """The states a participant who completes the study passes through, in order (the
    delayed-release pages have no state of their own: they show while the plans are held)."""
    return [cls.state for cls in pages_of(study) if cls.state is not None]


def first_state(study: Study) -> str:
    return states(study)[0]


def after(study: Study, state: str) -> str:
    """The state that follows `state` in the study's flow ("" when none does, or when the
    study has no page for `state`)."""
    order = states(study)
    if state not in order or state == order[-1]:
        return ""
    return order[order.index(state) + 1]


def page_for(participant: Participant) -> p.Page:
    """The participant's page: the first of the study's pages that is current for them (held
    plans show "under review", released ones start at the report), told what follows it; a
    page the study no longer displays still shows to a participant who is on it."""
    for cls in (*pages_of(participant.study), *SEQUENCE):
        if cls.is_current(participant):
            then = after(participant.study, cls.state) if cls.state else ""
            return cls(participant, then)
    raise LookupError(f"no page for a participant in state {participant.state!r}")


#: page keys a genuine (if stale) form can carry; anything else was altered
KNOWN_KEYS = {cls.name for cls in SEQUENCE if not cls.is_end} | {e.page for e in outcomes.ENDINGS}


def is_known_key(key: str) -> bool:
    if key in KNOWN_KEYS:
        return True
    head, _, tail = key.partition("-")
    return head == p.EvaluationPage.name and tail.isdigit() and 1 <= int(tail) <= MAX_PLANS


def page_rank(study: Study, key: str) -> tuple[int, int]:
    """A page key's place in the study's flow (end pages, and pages the study does not show,
    last), to tell a stale form from a form of a page not reached yet; plan pages are ranked
    by their number."""
    head, _, tail = key.partition("-")
    shown = pages_of(study)
    for i, cls in enumerate(shown):
        if cls.name == head and not cls.is_end:
            return i, int(tail) if tail.isdigit() else 0
    return len(shown), 0
