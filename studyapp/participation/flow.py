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

from functools import partial

from studyapp.definition import outcomes
from studyapp.models import Participant, Study
from studyapp.participation import pages as p
from studyapp.participation import wave_pages as w
from studyapp.participation import waves

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
    w.WaveFollowPage,
    w.WaveAwayPage,
    w.WaveChangesPage,
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
    page the study no longer displays still shows to a participant who is on it. A page
    with nothing to show them (survey logic hid every item) passes them on to the next."""
    for cls in (*pages_of(participant.study), *SEQUENCE):
        if cls.is_current(participant):
            then = after(participant.study, cls.state) if cls.state else ""
            page = cls(participant, then)
            page.follows = partial(after, participant.study)
            moved = page.passes_by()
            return page if moved is None else page_for(moved)
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


#: pages that are no step of "page n of N": the waiting page is the decision page's
#: interlude, "under review" closes a first session, the end page ends the study
NOT_STEPS = (p.WaitingPage, p.UnderReviewPage, p.EndPage, w.WaveAwayPage)


#: a multi-wave study's pages before the decision: its first round only
FIRST_ROUND = (
    p.ConsentPage, p.ScreeningPage, p.QuestionsPrePage, p.ScenarioPage, p.ProfilePage,
)  # fmt: skip


def _in_round(cls: type[p.Page], round_: int, rounds: int) -> bool:
    """Whether a round of a multi-wave study shows the page (a one-wave study: round 1 of 1,
    every page): the first round from consent, a later one from the changes page; the plan to
    follow in every round but the last, the closing questionnaire in the last only."""
    if issubclass(cls, FIRST_ROUND):
        return round_ == 1
    if cls is w.WaveChangesPage:
        return round_ > 1
    if cls is w.WaveFollowPage:
        return round_ < rounds
    if cls is p.QuestionsPostPage:
        return round_ == rounds
    return True


def steps(study: Study, plans: int, round_: int = 1, rounds: int = 1) -> list[str]:
    """The keys of the pages a participant who completes the study reads, in order, each of
    their `plans` a page of its own; in a multi-wave study those of one round (`round_` of
    `rounds`), so "page n of N" starts again when they come back."""
    keys: list[str] = []
    for cls in pages_of(study):
        if issubclass(cls, NOT_STEPS) or not _in_round(cls, round_, rounds):
            continue
        if cls is p.EvaluationPage:
            keys += [f"{cls.name}-{n}" for n in range(1, plans + 1)]
        else:
            keys.append(cls.name)
    if w.WaveChangesPage.name in keys:  # a later round opens with the changes
        keys.remove(w.WaveChangesPage.name)
        keys.insert(0, w.WaveChangesPage.name)
    return keys


def rounds_of(page: p.Page) -> tuple[int, int]:
    """(the round `page` belongs to, how many rounds): (1, 1) outside a multi-wave study. The
    changes page opens the round after the participant's wave."""
    if not waves.is_multi_wave(page.study):
        return 1, 1
    back = 1 if isinstance(page, w.WaveChangesPage) else 0
    return page.participant.wave + back, waves.settings_of(page.study).count


def plan_count(participant: Participant) -> int:
    """How many plans the participant's design shows (their condition's, or the study's);
    0 for a design that does not parse."""
    from recourse_engine import DesignError, parse_design
    from studyapp.generation.services import design_for

    try:
        return int(parse_design(design_for(participant)).total)
    except DesignError:
        return 0


def progress(page: p.Page) -> tuple[int, int] | None:
    """Where `page` stands in its participant's flow, (n, N) for "page n of N" (None for
    pages that are no step): counted on the declared flow, a plan page per plan (the ones
    they have, once they do)."""
    if isinstance(page, NOT_STEPS):
        return None
    key = page.key
    if isinstance(page, p.EvaluationPage):
        plans = page.total
        if page.recourse is not None:  # a later wave's plans are counted from 1 again
            key = f"{page.name}-{page.recourse.position - page.plans[0].position + 1}"
    else:
        plans = plan_count(page.participant)
    keys = steps(page.study, plans, *rounds_of(page))
    return (keys.index(key) + 1, len(keys)) if key in keys else None
