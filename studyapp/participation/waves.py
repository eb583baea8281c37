"""A multi-wave study (kind ``multi_wave``, docs/waves.md): participants act on a plan, come
back by link and re-apply; the model may change in between.

Wave 1 is the one-session recourse flow. After a wave's plans are rated the participant says
which plan they will follow (`follow_submit`) and leaves with their link; the next wave opens
on the study's schedule (`tick`, or their own visit once it is due). Back, they report per
profile item the new value or "no change" (`changes_submit`); the updated profile is scored
by the model in force for that wave and condition (`model_in_force`, kept with the other
model helpers in `generation.wave_model_store`: the study's when the policy is frozen, else
a model trained once per study, condition and wave and stored with its hash). Approved:
the approved ending (its own code); rejected: new plans from the study's design, rated as
in wave 1. The participant's `Profile` and plans are their current
wave's, so the pages and the worker read them as in a one-wave study; every wave is kept in
`Wave` and `WaveChange` rows.

Every function takes the time as `now`, so the schedule is run in tests with a controlled
clock.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from django.core.mail import send_mail
from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from recourse_engine import IncomeRule, rejects_factual
from studyapp.definition import engine_objects, outcomes
from studyapp.generation.wave_model_store import (  # the model store, read here and there
    is_multi_wave,
    model_in_force,
    policy_of,
    settings_of,
)
from studyapp.models import Participant, Profile, Recourse, Study
from studyapp.participation import release
from studyapp.participation.services import RejectedSubmission, StaleSubmission
from studyapp.wave_models import Wave

log = logging.getLogger(__name__)
S = Participant.State
G = Participant.Generation
#: a reported value a study that marks constraint breaks still refuses: it cannot be scored
ALWAYS_REFUSED = ("outside",)


class WaveError(ValueError):
    """A multi-wave step that cannot be applied (shown to the participant)."""


def score(model: Any, values: Mapping[str, float], schema: Any, income: float | None) -> tuple:
    """(rejected, probability: None for a rule) of a profile under `model`."""
    codes = np.array([float(values[k]) for k in schema.keys])
    rejected = rejects_factual(model, codes, income)
    if isinstance(model, IncomeRule):
        return rejected, None
    inc = None if income is None else np.array([income], dtype=float)
    proba = model.predict_proba(np.atleast_2d(codes), inc, factual_income=income)
    return rejected, float(np.asarray(proba)[0])


# --- wave 1 ----------------------------------------------------------------------------------
def wave_open(*, participant: Participant, now: datetime) -> Wave | None:
    """Record wave 1 after the profile was stored (its decision is the profile's)."""
    if not is_multi_wave(participant.study):
        return None
    profile = Profile.objects.filter(participant_id=participant.pk).first()
    if profile is None or Wave.objects.filter(participant=participant, number=1).exists():
        return None
    schema = engine_objects.schema_of(participant.study.schema)
    model, row = model_in_force(participant.study, participant.condition, 1)
    _, probability = score(model, profile.values, schema, participant.income_jpy)
    return Wave.objects.create(
        participant=participant, number=1, condition=participant.condition,
        model_policy=policy_of(participant.study, participant.condition)[0], announced=False,
        model_hash=row.model_hash, values=dict(profile.values), decision=profile.decision,
        probability=probability, decided_at=now, first_position=1,
    )  # fmt: skip


def current_wave(participant: Participant) -> Wave | None:
    return Wave.objects.filter(participant_id=participant.pk, number=participant.wave).first()


def is_last_wave(participant: Participant) -> bool:
    """In the last wave (or in a study that has no waves): nothing to come back for."""
    if not is_multi_wave(participant.study):
        return True
    return participant.wave >= settings_of(participant.study).count


def _locked(participant: Participant, expected: str) -> Participant:
    p = Participant.objects.select_for_update().get(pk=participant.pk)
    p.study = participant.study
    if p.state != expected:
        raise StaleSubmission(_("That page was already submitted; your stored answers are kept."))
    return p


# --- after a wave: the plan they follow ------------------------------------------------------
def next_due(study: Study, wave: int, now: datetime) -> datetime:
    """When wave `wave + 1` opens for a participant who finished wave `wave` at `now`."""
    release_ = settings_of(study).schedule[wave - 1]
    if release_.at is not None:
        return max(release_.at, now)
    return now + timedelta(days=int(release_.after_days or 0))


def follow_submit(
    *, participant: Participant, recourse_id: int | None, now: datetime, then: str, last: str
) -> Participant:
    """Record the plan the participant will follow (None: none of them) and leave until the
    next wave (`then`); after the last wave, go on to `last` (what follows the waves)."""
    with transaction.atomic():
        p = _locked(participant, S.WAVE_FOLLOW)
        wave = Wave.objects.select_for_update().get(participant=p, number=p.wave)
        if recourse_id is not None:
            ok = Recourse.objects.filter(
                pk=recourse_id, participant=p, position__gte=wave.first_position
            ).exists()
            if not ok:
                raise RejectedSubmission(
                    _("That plan is not one of this wave's plans; nothing was stored.")
                )
        wave.followed_id = recourse_id
        wave.followed_at = now
        if is_last_wave(p):
            _move(p, last)
        else:
            wave.next_due_at = next_due(p.study, p.wave, now)
            p.state = then
        wave.save()
        p.save()
    return p


def _move(p: Participant, state: str) -> None:
    if outcomes.is_end(state):
        p.state = state
        p.completion_code = outcomes.end_code(p.study, state)
        p.finished_at = p.finished_at or timezone.now()
    else:
        p.state = state


# --- between waves: the schedule -------------------------------------------------------------
def is_open(participant: Participant, now: datetime) -> bool:
    """Away, and their next wave is due: their changes page opens."""
    if participant.state != S.WAVE_AWAY:
        return False
    wave = current_wave(participant)
    return wave is not None and wave.next_due_at is not None and wave.next_due_at <= now


def _open(pk: int, now: datetime) -> Participant | None:
    with transaction.atomic():
        p = Participant.objects.select_for_update().select_related("study").get(pk=pk)
        if not is_open(p, now):
            return None
        Wave.objects.filter(participant=p, number=p.wave).update(released_at=now)
        p.state = S.WAVE_CHANGES
        p.save(update_fields=["state", "updated_at"])
    return p


def open_if_due(*, participant: Participant, now: datetime) -> Participant:
    """A visit once the next wave is due opens it (between two ticks)."""
    if not is_open(participant, now):
        return participant
    return _open(participant.pk, now) or participant


def _mail(p: Participant) -> None:
    if not p.contact_email:
        return
    with translation.override(p.page_language):
        subject = release.mail_subject(p, _("The next round of the study is open"))
        body = _("Please come back and tell us what changed: %(link)s") % {
            "link": release.link_of(p)
        }
    try:
        send_mail(subject, body, release.sender(), [p.contact_email])
    except Exception as exc:  # noqa: BLE001 - a mail server down must not stop the schedule
        log.warning("participant %s: wave e-mail not sent (%s)", p.pk, exc)


def tick(*, now: datetime) -> dict[str, list[int]]:
    """Open every wave that is due (with a notice to those who left an address) and close
    with the expired outcome a return not made within the study's `return_deadline_days`."""
    due = Wave.objects.filter(
        participant__study__kind="multi_wave", participant__state=S.WAVE_AWAY,
        next_due_at__lte=now, released_at__isnull=True,
    ).values_list("participant_id", flat=True)  # fmt: skip
    opened = []
    for pk in sorted(set(due)):
        p = _open(pk, now)
        if p is not None:
            _mail(p)
            opened.append(pk)
    expired = []
    late = Participant.objects.filter(study__kind="multi_wave", state=S.WAVE_CHANGES)
    for p in late.select_related("study").order_by("pk"):
        wave = current_wave(p)
        deadline = timedelta(days=int(p.study.return_deadline_days))
        if wave is not None and wave.released_at is not None and now >= wave.released_at + deadline:
            with transaction.atomic():
                locked = Participant.objects.select_for_update().get(pk=p.pk)
                if locked.state == S.WAVE_CHANGES:
                    locked.study = p.study
                    _move(locked, S.EXPIRED)
                    locked.save()
                    expired.append(p.pk)
    return {"waves_opened": opened, "waves_expired": expired}


def contact_set(*, participant: Participant, email: str) -> None:
    """Keep an address for the notice that the next wave is open (refused: malformed)."""
    from django.core.exceptions import ValidationError
    from django.core.validators import validate_email

    try:
        validate_email(email.strip())
    except ValidationError:
        raise WaveError(_("That is not an e-mail address; nothing was stored.")) from None
    Participant.objects.filter(pk=participant.pk).update(contact_email=email.strip())
