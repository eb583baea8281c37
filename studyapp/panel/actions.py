"""Actions on Prolific submissions — approve (in bulk), reject, screen out, ask to return,
set up and pay bonuses — each recorded in the ledger (`PanelAction`) before it is sent, under
a key that names what it does, so that it is never sent twice: a key already sent returns the
recorded action and sends nothing; a payment that may have gone through (a time-out or a 5xx
on Prolific's non-idempotent pay) is never sent again by the platform.

Every input is checked before anything is recorded: a rejection needs one of Prolific's
categories and a message of at least 100 characters.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from studyapp.definition import outcomes
from studyapp.models import PanelAction, Study
from studyapp.panel import service
from studyapp.panel.client import (
    REJECT_MESSAGE_MIN,
    REJECTION_CATEGORIES,
    Outcome,
    ProlificClient,
    Uncertain,
)
from studyapp.panel.errors import PanelError

K = PanelAction.Kind
S = PanelAction.State


@dataclass
class Who:
    """Who acts: the account (console) or the command line's user."""

    by: str
    user: Any = None


def _digest(parts: list[str]) -> str:
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]


def _ids(submission_ids: list[str]) -> list[str]:
    ids = sorted({s.strip() for s in submission_ids if s and s.strip()})
    if not ids:
        raise PanelError("no submission ids given")
    bad = [s for s in ids if not service.STUDY_ID.match(s)]
    if bad:
        raise PanelError(f"malformed submission id(s): {', '.join(map(repr, bad[:5]))}")
    return ids


def _record(
    study: Study, kind: str, key: str, panel_study_id: str, ids: list[str],
    payload: dict[str, Any], who: Who,
) -> tuple[PanelAction, bool]:  # fmt: skip
    """The ledger row of `key` (created, or found), and whether it may be sent now."""
    try:
        with transaction.atomic():
            row = PanelAction.objects.create(
                study=study, kind=kind, key=key, panel_study_id=panel_study_id,
                submission_ids=ids, payload=payload, by=who.by,
                by_user=who.user if getattr(who.user, "pk", None) else None,
            )  # fmt: skip
            return row, True
    except IntegrityError:
        row = PanelAction.objects.get(key=key)
    if row.state == S.SENT:
        return row, False
    if row.response.get("uncertain") or (row.state == S.PENDING and row.kind == K.BONUS_PAY):
        raise PanelError(
            f"{row.kind} {key} may already have reached Prolific ({row.error}); it is not sent "
            "again: check the study on Prolific"
        )
    return row, True


def _send(row: PanelAction, safe: bool, call: Callable[[], Outcome]) -> PanelAction:
    try:
        done = call()
    except Uncertain as exc:
        row.state, row.error = S.FAILED, str(exc)
        row.response = {"uncertain": not safe}
        row.attempts += 1
        row.save()
        raise PanelError(str(exc)) from exc
    except PanelError as exc:
        row.state, row.error = S.FAILED, str(exc)
        row.attempts += 1
        row.save()
        raise
    row.state, row.error, row.sent_at = S.SENT, "", timezone.now()
    row.attempts += done.attempts
    row.response = done.data if isinstance(done.data, dict) else {"answer": done.data}
    row.save()
    row.just_sent = True  # type: ignore[attr-defined]  # what the caller reports
    return row


def _already(study: Study, kind: str) -> set[str]:
    sent = PanelAction.objects.filter(study=study, kind=kind, state=S.SENT)
    return {sid for a in sent for sid in a.submission_ids}


def approve(
    study: Study, client: ProlificClient, submission_ids: list[str], who: Who,
    panel_study_id: str = "",
) -> PanelAction | None:  # fmt: skip
    """Approves in bulk the submissions not approved through the ledger before (None: all
    were)."""
    ids = [s for s in _ids(submission_ids) if s not in _already(study, K.APPROVE)]
    if not ids:
        return None
    sid = panel_study_id or service.connection_of(study).panel_study_id
    row, go = _record(study, K.APPROVE, f"approve:{_digest(ids)}", sid, ids,
                      {"submission_ids": ids}, who)  # fmt: skip
    return _send(row, True, lambda: client.bulk_approve(ids)) if go else row


def check_rejection(category: str, message: str) -> tuple[str, str]:
    category, message = (category or "").strip().upper(), (message or "").strip()
    if category not in REJECTION_CATEGORIES:
        raise PanelError(
            f"rejection category {category!r} is not one of Prolific's: "
            + ", ".join(REJECTION_CATEGORIES)
        )
    if len(message) < REJECT_MESSAGE_MIN:
        raise PanelError(
            f"the rejection message has {len(message)} character(s); Prolific requires at least "
            f"{REJECT_MESSAGE_MIN} (say what was wrong and how the participant can ask about it)"
        )
    return category, message


def reject(
    study: Study, client: ProlificClient, submission_id: str, category: str, message: str,
    who: Who,
) -> PanelAction:  # fmt: skip
    category, message = check_rejection(category, message)
    (sub,) = _ids([submission_id])
    body = {"action": "REJECT", "rejection_category": category, "message": message}
    sid = service.connection_of(study).panel_study_id
    row, go = _record(study, K.REJECT, f"reject:{sub}", sid, [sub], body, who)
    return _send(row, True, lambda: client.transition(sub, body)) if go else row


def screen_out(
    study: Study, client: ProlificClient, submission_ids: list[str], who: Who
) -> list[PanelAction]:
    """Completes each submission with the study's screen-out code (a FIXED_SCREENOUT code:
    Prolific screens it out and pays the fixed screen-out payment)."""
    code = outcomes.outcome_code(study, "screened_out")
    body = {"action": "COMPLETE", "completion_code": code}
    sid = service.connection_of(study).panel_study_id
    done = []
    for sub in _ids(submission_ids):
        row, go = _record(study, K.SCREEN_OUT, f"screen_out:{sub}", sid, [sub], body, who)
        done.append(_send(row, True, lambda s=sub: client.transition(s, body)) if go else row)
    return done


def request_return(
    study: Study, client: ProlificClient, submission_ids: list[str], reason: str, who: Who
) -> list[PanelAction]:
    reason = (reason or "").strip()
    if not reason:
        raise PanelError("asking to return needs a reason (e.g. 'Did not finish the study')")
    sid = service.connection_of(study).panel_study_id
    done = []
    for sub in _ids(submission_ids):
        body = {"request_return_reasons": [reason]}
        row, go = _record(study, K.REQUEST_RETURN, f"return:{sub}", sid, [sub], body, who)
        call = lambda s=sub: client.request_return(s, [reason])  # noqa: E731
        done.append(_send(row, True, call) if go else row)
    return done


def bonus_setup(
    study: Study, client: ProlificClient, rows: list[tuple[str, str]], who: Who,
    panel_study_id: str = "",
) -> PanelAction:  # fmt: skip
    """Sets up (does not pay) one bulk bonus; the same rows set up before are not set up
    again."""
    if not rows:
        raise PanelError("the bonus rule selects nobody; nothing set up")
    sid = panel_study_id or service.connection_of(study).panel_study_id
    lines = [f"{pid},{amount}" for pid, amount in sorted(rows)]
    # the ledger outlives the panel ids (retention), so it keeps counts, not the rows
    total = sum(Decimal(amount) for _, amount in rows)
    payload = {"study_id": sid, "participants": len(rows), "amount": f"{total:.2f}"}
    row, go = _record(study, K.BONUS_SETUP, f"bonus_setup:{sid}:{_digest(lines)}", sid,
                      [], payload, who)  # fmt: skip
    return _send(row, True, lambda: client.setup_bonuses(sid, sorted(rows))) if go else row


def bonus_pay(study: Study, client: ProlificClient, setup: PanelAction, who: Who) -> PanelAction:
    """Pays a bulk bonus set up before, once: Prolific's pay is not idempotent."""
    if setup.kind != K.BONUS_SETUP or setup.state != S.SENT or not setup.response.get("id"):
        raise PanelError(f"action {setup.pk} is not a bonus set up on Prolific; nothing paid")
    bulk = str(setup.response["id"])
    row, go = _record(study, K.BONUS_PAY, f"bonus_pay:{bulk}", setup.panel_study_id, [],
                      {"bulk_bonus_payment": bulk}, who)  # fmt: skip
    return _send(row, False, lambda: client.pay_bonuses(bulk)) if go else row
