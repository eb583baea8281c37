"""Storing a page's integrity signals with its submit.

Only the rating pages (one per plan) and the study's question pages collect them, only when
the study has them switched on, and only from a participant who has consented (the consent
page says they are recorded). A page's record sums its submissions: a form sent back with
a problem starts the script afresh, and the second submit's counts are added to the first's.
Nothing here can stop a page's answers from being stored: a refused payload or a failed
write is logged with its reason and dropped.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping
from typing import Any

from django.db import DatabaseError, transaction

from studyapp.integrity.payload import FIELD, FieldSignals, Payload, PayloadError, payload_parse
from studyapp.models import IntegrityRecord, Participant

log = logging.getLogger(__name__)

#: the pages that carry the script: a plan's rating page and the study's question pages
COLLECTING = ("evaluation", "questions_pre", "questions_post")
#: a stored sum never passes this (a PositiveIntegerField holds up to 2**31 - 1)
CAP = 2_000_000_000


def collects(page: Any) -> bool:
    """Whether `page` (a `participation.pages.Page`) carries the script and is recorded."""
    participant = getattr(page, "participant", None)
    if not isinstance(participant, Participant) or getattr(page, "name", "") not in COLLECTING:
        return False
    return bool(participant.study.integrity_signals) and participant.consented_at is not None


def _add(a: int, b: int) -> int:
    return min(a + b, CAP)


def _merged_fields(
    old: Mapping[str, Any], new: Mapping[str, FieldSignals], shown_before_ms: int
) -> dict[str, Any]:
    """Field signals summed; a field's first answer stays the earliest, counted from the
    page's first showing (`shown_before_ms`: how long the earlier submits had it open)."""
    out = {name: dict(values) for name, values in old.items()}
    for name, signals in new.items():
        prev = out.get(name, {})
        first = prev.get("first_ms")
        if first is None and signals.first_ms is not None:
            first = _add(signals.first_ms, shown_before_ms)
        out[name] = {
            "pastes": _add(prev.get("pastes", 0), signals.pastes),
            "pasted_chars": _add(prev.get("pasted_chars", 0), signals.pasted_chars),
            "inputs": _add(prev.get("inputs", 0), signals.inputs),
            "typing_ms": _add(prev.get("typing_ms", 0), signals.typing_ms),
            "first_ms": first,
        }
    return out


def record_store(participant: Participant, page_key: str, payload: Payload) -> IntegrityRecord:
    """Add one submit's signals to the page's record (made on the first)."""
    pastes = sum(f.pastes for f in payload.fields.values())
    pasted = sum(f.pasted_chars for f in payload.fields.values())
    typing = sum(f.typing_ms for f in payload.fields.values())
    with transaction.atomic():
        row = (
            IntegrityRecord.objects.select_for_update()
            .filter(participant=participant, page=page_key)
            .first()
        )
        if row is None:
            return IntegrityRecord.objects.create(
                participant=participant,
                page=page_key,
                page_ms=payload.page_ms,
                blurs=payload.blurs,
                hidden=payload.hidden,
                away_ms=payload.away_ms,
                pastes=min(pastes, CAP),
                pasted_chars=min(pasted, CAP),
                typing_ms=min(typing, CAP),
                fields=_merged_fields({}, payload.fields, 0),
            )
        row.fields = _merged_fields(row.fields or {}, payload.fields, row.page_ms)
        row.submissions = _add(row.submissions, 1)
        row.page_ms = _add(row.page_ms, payload.page_ms)
        row.blurs = _add(row.blurs, payload.blurs)
        row.hidden = _add(row.hidden, payload.hidden)
        row.away_ms = _add(row.away_ms, payload.away_ms)
        row.pastes = _add(row.pastes, pastes)
        row.pasted_chars = _add(row.pasted_chars, pasted)
        row.typing_ms = _add(row.typing_ms, typing)
        row.save()
        return row


def record_post(page: Any, post: Mapping[str, Any], form_fields: Collection[str]) -> bool:
    """Store the signals a submit of `page` carries; True when stored. Never raises: the
    page's answers go on to be stored whatever happens here."""
    raw = post.get(FIELD, "") or ""
    if not raw or not collects(page):
        return False
    participant = page.participant
    try:
        payload = payload_parse(str(raw), form_fields)
    except PayloadError as exc:
        log.warning(
            "integrity signals of participant %s, page %s ignored: %s",
            participant.pk, page.key, exc,
        )  # fmt: skip
        return False
    try:
        record_store(participant, page.key, payload)
    except DatabaseError as exc:
        log.warning(
            "integrity signals of participant %s, page %s not stored: %s",
            participant.pk, page.key, exc,
        )  # fmt: skip
        return False
    return True
