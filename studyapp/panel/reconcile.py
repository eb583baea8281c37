"""Reconciliation: Prolific's submissions of a study matched to its participants by panel id
(`PROLIFIC_PID`), every disagreement listed with the action that would settle it.

A mismatch is a state the two sides cannot both be right about: a submission with no
participant, a participant who finished here with no submission, a submission without a code
(NOCODE) or with another outcome's code, a timed-out or returned submission of someone who
finished here, a screen-out here that Prolific does not show. Submissions that agree but still
await review are not mismatches; they are listed apart, to approve in bulk.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from studyapp.models import Participant, Study
from studyapp.panel import codes
from studyapp.panel.codes import ACTIVE, AWAITING, RETURNED, SCREENED_OUT, TIMED_OUT


@dataclass(frozen=True)
class Mismatch:
    kind: str
    session: int
    submission_id: str
    panel_id: str
    participant: int | None
    status: str
    detail: str
    #: the proposed action: a PanelAction kind, or "" when only a person can settle it
    action: str
    proposal: str

    def line(self) -> str:
        who = f"participant {self.participant}" if self.participant else "no participant"
        sub = self.submission_id or "no submission"
        return f"[{self.kind}] {sub} ({self.panel_id}, {who}): {self.detail} -> {self.proposal}"


@dataclass
class Reconciliation:
    submissions: int = 0
    participants: int = 0
    mismatches: list[Mismatch] = field(default_factory=list)
    #: agreeing submissions awaiting review with a rewarded outcome: (session, submission id)
    to_approve: list[tuple[int, str]] = field(default_factory=list)


def _panel_participants(study: Study) -> dict[str, Participant]:
    qs = Participant.objects.filter(study=study, is_test=False).exclude(recruitment_id="")
    return {p.recruitment_id: p for p in qs.select_related("study")}


def _finished(p: Participant, session: int) -> str:
    return codes.expected_outcome(p, session)


def reconcile(study: Study, submissions: dict[int, list[dict[str, Any]]]) -> Reconciliation:
    """`submissions`: session (1, or 2 for a delayed study's second Prolific study) -> that
    Prolific study's submissions as its API lists them."""
    people = _panel_participants(study)
    out = Reconciliation(participants=len(people))
    for session, subs in sorted(submissions.items()):
        seen: set[str] = set()
        for s in subs:
            out.submissions += 1
            pid = str(s.get("participant_id") or s.get("participant") or "")
            seen.add(pid)
            _one(out, session, s, people.get(pid), pid)
        for pid, p in people.items():
            outcome = _finished(p, session)
            if pid in seen or not outcome:
                continue
            out.mismatches.append(
                Mismatch(
                    "no submission", session, "", pid, p.pk, "",
                    f"finished here ({outcome}) but Prolific has no submission of this panel id",
                    "", "check the panel id with the participant or Prolific support; nothing "
                    "can be sent without a submission",
                )
            )  # fmt: skip
    return out


def _one(
    out: Reconciliation, session: int, s: dict[str, Any], p: Participant | None, pid: str
) -> None:
    sid, status = str(s.get("id", "")), str(s.get("status", ""))
    code = str(s.get("study_code") or s.get("entered_code") or "")

    def add(kind: str, detail: str, action: str, proposal: str) -> None:
        number = p.pk if p else None
        out.mismatches.append(Mismatch(kind, session, sid, pid, number, status, detail, action,
                                       proposal))  # fmt: skip

    if p is None:
        if status in (AWAITING,):
            add("no participant", "a submission with no participant here (no data under this "
                "panel id)", "request_return", "ask to return")  # fmt: skip
        return
    outcome = _finished(p, session)
    rule = codes.BY_OUTCOME.get(outcome)
    returned_asked = bool(s.get("return_requested"))
    if status == ACTIVE:
        if rule is not None:
            add("still active", f"finished here ({outcome}) but the submission is still active "
                "(the participant did not return to Prolific)", "",
                "wait; Prolific times it out, then see timed out")  # fmt: skip
        return
    if status == TIMED_OUT:
        if outcome in ("completed", "approved", "first_session"):
            add("timed out", f"finished here ({outcome}) but timed out on Prolific", "bonus",
                "pay the reward as a bonus")  # fmt: skip
        return
    if status == RETURNED:
        if outcome in ("completed", "approved", "first_session"):
            add("returned", f"returned on Prolific but finished here ({outcome})", "",
                "exclude their data, or pay the reward as a bonus")  # fmt: skip
        return
    if rule is None:
        if status == AWAITING:
            add("unfinished", f"submitted on Prolific{' without a code' if not code else ''} "
                f"but still on the way here ({p.state})", "request_return",
                "ask to return")  # fmt: skip
        return
    if status == AWAITING and (not code or code.upper() == "NOCODE"):
        action, proposal = _settle(outcome)
        add("NOCODE", f"submitted without a code; here: {outcome}", action, proposal)
        return
    expected = codes.outcomes.outcome_code(p.study, outcome)
    if code and code != expected and status == AWAITING:
        action, proposal = _settle(outcome)
        add("wrong code", f"entered code {code!r}, but here: {outcome} (code {expected!r})",
            action, proposal)  # fmt: skip
        return
    if status not in rule.agreeing and not (returned_asked and status == AWAITING):
        action, proposal = _settle(outcome)
        add("status", f"{status} on Prolific, but here: {outcome}", action, proposal)
        return
    if status == AWAITING and outcome in ("completed", "approved", "first_session"):
        out.to_approve.append((session, sid))


def _settle(outcome: str) -> tuple[str, str]:
    if outcome in ("completed", "approved", "first_session", "expired"):
        return "approve", "approve"
    if outcome in ("screened_out", "quota_full"):
        return "screen_out", "screen out"
    if outcome in ("withdrew", "declined_consent"):
        return "request_return", "ask to return"
    return "", "review: approve, or reject with category FAILED_CHECK and a message"


__all__ = ["Mismatch", "Reconciliation", "reconcile", "SCREENED_OUT"]
