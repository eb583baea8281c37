"""The study's outcomes as Prolific completion codes: one record per outcome with the code
type and automated actions Prolific should take when a participant returns with its code,
and what that participant then gets — the mapping the console shows and `completion_codes`
sends to Prolific. The codes themselves are the study's own (`outcome_codes`); the return
link of each is Prolific's `https://app.prolific.com/submissions/complete?cc=<code>`.

A delayed-release study pays its two sessions as such: the first session ends with the
`first_session` code, which Prolific reviews like a completion (the first session's reward);
the second session is a second Prolific study (`second_study_id`, its `completed` code) or,
with one Prolific study only, a bonus per completed second session (docs/prolific.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from studyapp.definition import outcomes
from studyapp.models import Participant, Study

RETURN_URL = "https://app.prolific.com/submissions/complete?cc={code}"
#: Prolific submission statuses (as its API spells them)
AWAITING = "AWAITING REVIEW"
APPROVED = "APPROVED"
REJECTED = "REJECTED"
RETURNED = "RETURNED"
SCREENED_OUT = "SCREENED OUT"
TIMED_OUT = "TIMED-OUT"
ACTIVE = "ACTIVE"


@dataclass(frozen=True)
class CodeRule:
    """One outcome as a Prolific completion code."""

    outcome: str
    code_type: str
    actions: tuple[dict[str, Any], ...]
    #: the submission statuses that agree with this outcome on Prolific
    agreeing: tuple[str, ...]
    #: what the participant gets, in words
    gets: str


_REVIEW = ({"action": "MANUALLY_REVIEW"},)
_SCREEN = ({"action": "FIXED_SCREEN_OUT_PAYMENT"},)


def _ret(reason: str) -> tuple[dict[str, Any], ...]:
    return ({"action": "REQUEST_RETURN", "return_reason": reason},)


RULES: tuple[CodeRule, ...] = (
    CodeRule("completed", "COMPLETED", _REVIEW, (AWAITING, APPROVED), "the study's reward"),
    CodeRule("approved", "COMPLETED", _REVIEW, (AWAITING, APPROVED), "the study's reward"),
    CodeRule(
        "first_session", "COMPLETED", _REVIEW, (AWAITING, APPROVED), "the first session's reward"
    ),
    CodeRule("screened_out", "FIXED_SCREENOUT", _SCREEN, (SCREENED_OUT,), "the screen-out payment"),
    CodeRule("quota_full", "FIXED_SCREENOUT", _SCREEN, (SCREENED_OUT,), "the screen-out payment"),
    CodeRule(
        "failed_attention",
        "FAILED_ATTENTION_CHECK",
        _REVIEW,
        (AWAITING, APPROVED, REJECTED),
        "reviewed by the researcher: the reward, or a rejection (FAILED_CHECK)",
    ),
    CodeRule(
        "withdrew", "OTHER", _ret("Withdrew consent"), (AWAITING, RETURNED), "asked to return"
    ),
    CodeRule(
        "declined_consent",
        "NO_CONSENT",
        _ret("Withdrew consent"),
        (AWAITING, RETURNED),
        "asked to return",
    ),
    CodeRule(
        "expired",
        "OTHER",
        _REVIEW,
        (AWAITING, APPROVED),
        "reviewed by the researcher (the second session was not taken)",
    ),
)
BY_OUTCOME: dict[str, CodeRule] = {r.outcome: r for r in RULES}


def is_delayed(study: Study) -> bool:
    return study.release_mode == "delayed"


def study_codes(study: Study, session: int = 1) -> list[dict[str, Any]]:
    """Prolific's `completion_codes` of the study's Prolific study (`session` 2: the second
    session's study of a delayed-release study)."""
    wanted = [r for r in RULES if _in_session(study, r.outcome, session)]
    return [
        {
            "code": outcomes.outcome_code(study, r.outcome),
            "code_type": r.code_type,
            "actor": "participant",
            "actions": [dict(a) for a in r.actions],
        }
        for r in wanted
        if outcomes.outcome_code(study, r.outcome)
    ]


def _in_session(study: Study, outcome: str, session: int) -> bool:
    if not is_delayed(study):
        return outcome != "first_session" and session == 1
    first = ("first_session", "screened_out", "quota_full", "declined_consent", "approved")
    if session == 1:
        return outcome in first or outcome in ("withdrew", "failed_attention")
    return outcome not in first


def mapping(study: Study, two_studies: bool = False) -> list[dict[str, Any]]:
    """The console's table: outcome, code, Prolific type and actions, return link, what the
    participant gets, and the session (delayed release)."""
    rows = []
    for r in RULES:
        code = outcomes.outcome_code(study, r.outcome)
        if r.outcome == "first_session" and not is_delayed(study):
            continue
        sessions = [s for s in (1, 2) if _in_session(study, r.outcome, s)]
        gets = r.gets
        if is_delayed(study) and r.outcome == "completed" and not two_studies:
            gets = "the second session's pay as a bonus (one Prolific study)"
        rows.append(
            {
                "outcome": r.outcome,
                "code": code,
                "code_type": r.code_type,
                "actions": ", ".join(a["action"] for a in r.actions),
                "return_url": RETURN_URL.format(code=code),
                "link_set": (study.outcome_codes or {}).get(r.outcome, {}).get("redirect_url", "")
                == RETURN_URL.format(code=code),
                "gets": gets,
                "sessions": "/".join(map(str, sessions)) if is_delayed(study) else "",
            }
        )
    return rows


def expected_outcome(p: Participant, session: int) -> str:
    """The outcome whose code the participant was given for this session ("" while on the
    way): the first session of a delayed study ends with `first_session` once the profile is
    in, unless the participation ended there."""
    if session == 1 and is_delayed(p.study) and p.submitted_at is not None:
        ended_in_first = p.returned_at is None and outcomes.is_end(p.state)
        if not ended_in_first or p.state == Participant.State.EXPIRED:
            return "first_session"
    if session == 2 and p.returned_at is None:
        return ""
    return outcomes.outcome_of(p)
