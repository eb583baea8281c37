"""The outcome table: one record per way a participation ends, from the participant's end
state to the outcome whose completion code and return link the study gives them, and the end
page they read (one template, `studyapp/end.html`, filled from the record).

The states and outcomes are the export contract's (`analysis.contract`, no_recourse credited
as completed); the codes and links are the study's `outcome_codes` setting; a page's text is
the study's own (`text_key`) or the default here. Kept on the ground floor because the
participant pages, the worker and the release schedule all end a participation with it. A new
way to end is one record here (and its state and outcome in the model and the contract).

The texts are msgids (`gettext_noop`): the end page translates them into the study's
language when it renders, so they stay in the Japanese catalogue under these ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from django.utils.translation import gettext_noop

from analysis import contract
from studyapp.models import Participant, Study

S = Participant.State


@dataclass(frozen=True)
class Ending:
    """One way to end: the state, and what its end page says (texts are msgids)."""

    state: str
    #: the page's key (what a stale form names) and what it was called as its own template
    page: str
    title: str
    heading: str
    text: str
    #: id of the element holding the code (bots and browser tests find the code by it)
    code_id: str
    #: the study's own text for this page (a `texts` key); "" when it has none
    text_key: str = ""
    code_label: str = gettext_noop("Code")
    #: shows the study's rejection text above its own (no plan could be found)
    shows_rejection: bool = False

    @property
    def outcome(self) -> str:
        """The export's outcome of this state."""
        return contract.STATE_OUTCOME[self.state]

    @property
    def credited_as(self) -> str:
        """The outcome whose code and return link the participant gets."""
        return contract.CODE_OUTCOME[self.state]


ENDINGS: tuple[Ending, ...] = (
    Ending(
        S.COMPLETED,
        page="completion",
        title=gettext_noop("Thank you"),
        heading=gettext_noop("Thank you"),
        text=gettext_noop("Thank you for taking part. Your completion code is below."),
        text_key="completion",
        code_label=gettext_noop("Completion code"),
        code_id="completion-code",
    ),
    Ending(
        S.SCREENED_OUT,
        page="screened_out",
        title=gettext_noop("Thank you"),
        heading=gettext_noop("Thank you for your interest"),
        text=gettext_noop(
            "Unfortunately you do not meet the conditions of this study. Please return to the "
            "panel with the code below."
        ),
        text_key="screenout",
        code_id="screenout-code",
    ),
    Ending(
        S.NO_RECOURSE,
        page="no_recourse",
        title=gettext_noop("Thank you"),
        heading=gettext_noop("Thank you"),
        text=gettext_noop(
            "We are sorry: no action plan could be found for your profile. This is not a "
            "problem with your answers; you are credited for taking part with the code below."
        ),
        text_key="no_recourse",
        code_id="no-recourse-code",
        shows_rejection=True,
    ),
    Ending(
        S.QUOTA_FULL,
        page="quota_full",
        title=gettext_noop("Thank you"),
        heading=gettext_noop("Thank you for your interest"),
        text=gettext_noop(
            "We already have enough participants like you for this study, so it ends here for "
            "you. Please return to the panel with the code below."
        ),
        text_key="quota_full",
        code_id="quota-full-code",
    ),
    Ending(
        S.FAILED_ATTENTION,
        page="failed_attention",
        title=gettext_noop("The study has ended"),
        heading=gettext_noop("The study has ended"),
        text=gettext_noop(
            "Some of the check questions were not answered as instructed, so the study ends "
            "here. Please return to the panel with the code below."
        ),
        text_key="failed_attention",
        code_id="failed-attention-code",
    ),
    Ending(
        S.WITHDRAWN,
        page="withdrawn",
        title=gettext_noop("You have withdrawn"),
        heading=gettext_noop("You have withdrawn from the study"),
        text=gettext_noop(
            "Your answers have been deleted. Thank you for your time. Please return to the "
            "panel with the code below."
        ),
        text_key="withdrawn",
        code_id="withdrew-code",
    ),
    Ending(
        S.DECLINED,
        page="declined",
        title=gettext_noop("Thank you"),
        heading=gettext_noop("You did not agree to take part"),
        text=gettext_noop(
            "Thank you for your time. Nothing you entered has been kept. Please return to the "
            "panel with the code below."
        ),
        code_id="declined-code",
    ),
    Ending(
        S.EXPIRED,
        page="expired",
        title=gettext_noop("This study has closed"),
        heading=gettext_noop("This study has closed"),
        text=gettext_noop(
            "The time to answer has passed, so this study has closed for you. Thank you for "
            "your interest. Your code is below."
        ),
        text_key="expired",
        code_id="expired-code",
    ),
    Ending(
        S.APPROVED,
        page="approved",
        title=gettext_noop("Assessment result"),
        heading=gettext_noop("Your application was approved"),
        text=gettext_noop(
            "The AI system approved your application, so there is nothing to improve and the "
            "study ends here for you. Thank you for taking part. Your code is below."
        ),
        text_key="approved",
        code_label=gettext_noop("Completion code"),
        code_id="approved-code",
    ),
)

#: end state -> its record
BY_STATE: dict[str, Ending] = {e.state: e for e in ENDINGS}
#: a participant's end state -> the outcome whose code and return link they get (the export's
#: outcome map, with no_recourse credited as completed)
STATE_OUTCOME: dict[str, str] = contract.CODE_OUTCOME
#: the states of participants still on their way (every state that is not an ending)
ON_THE_WAY: tuple[str, ...] = tuple(s for s in S.values if s not in BY_STATE)


def is_end(state: str) -> bool:
    return state in BY_STATE


def outcome_of(participant: Participant) -> str:
    """The outcome of the participant's state; "" while they are still on the way."""
    return STATE_OUTCOME.get(participant.state, "")


def outcome_code(study: Study, outcome: str) -> str:
    return str((study.outcome_codes or {}).get(outcome, {}).get("code", ""))


def end_code(study: Study, state: str) -> str:
    """The completion code of an end state (its credited outcome's)."""
    return outcome_code(study, BY_STATE[state].credited_as)


def outcome_link(study: Study, outcome: str, code: str) -> str:
    """The outcome's return link with ``{code}`` filled in; "" when none is set or it is not
    an http(s) address (a researcher's typo must not become a script link)."""
    url = str((study.outcome_codes or {}).get(outcome, {}).get("redirect_url", "")).strip()
    if not url:
        return ""
    url = url.replace("{code}", code)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return ""
    return url
