"""Delayed release: plans computed at once, shown from a scheduled time in a second session.

In a delayed-release study (``release_mode = "delayed"``) a participant who submits their
profile sees the study's "under review" text and leaves with their link (by e-mail too, when
they give an address). Their plans are generated as usual, but the participant pages keep
showing "under review" until `tick` releases them: at the study's fixed `release_at`, or
`release_after_days` after the submission. Released participants get a notice (and, every
`reminder_every_days`, up to `max_reminders` reminders) by e-mail when they gave an address;
their second session opens at the rejection report, then the evaluations. The second session
closes `return_deadline_days` after the release: whoever has not finished by then ends with
the ``expired`` outcome and its own completion code.

Every function takes the time as `now`, so the schedule is run in tests with a controlled
clock; Celery beat calls `tick` with the real one (`tasks.release_due`).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.db import transaction
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _

from studyapp.definition import outcomes
from studyapp.models import DeletionReceipt, Participant, Study
from studyapp.participation import study_cache, survey_logic
from studyapp.retention.service import erase

log = logging.getLogger(__name__)

S = Participant.State
G = Participant.Generation
#: the delayed release's own rule for the contact address, as its receipts name it
FORGET_RULE = "delayed release: an address is kept only while there is something to send"
#: states in which a delayed participant is shown "under review" until released
HELD = (S.WAITING, S.EVALUATING, S.NO_RECOURSE)
#: states of the second session that the deadline closes
SECOND_SESSION = (S.EVALUATING, S.QUESTIONS_POST)


class ReleaseError(ValueError):
    """A participant request about the release that cannot be applied (shown to them)."""


def is_delayed(study: Study) -> bool:
    return study.kind == "recourse" and study.release_mode == "delayed"


def is_held(participant: Participant) -> bool:
    """Whether the participant's plans exist or are coming but are not released yet."""
    return (
        is_delayed(participant.study)
        and participant.released_at is None
        and participant.state in HELD
        and participant.submitted_at is not None
    )


def awaits_return(participant: Participant) -> bool:
    """Released and not back yet: their second session starts at the rejection report."""
    return (
        is_delayed(participant.study)
        and participant.released_at is not None
        and participant.returned_at is None
        and participant.state == S.EVALUATING
    )


def due_at(study: Study, submitted: datetime) -> datetime:
    """When a profile submitted at `submitted` is released under the study's schedule."""
    if study.release_at is not None:
        return study.release_at
    return submitted + timedelta(days=int(study.release_after_days or 0))


def participant_schedule(*, participant: Participant, now: datetime) -> None:
    """Record the submission time and the release due (after the profile was stored)."""
    if not is_delayed(participant.study):
        return
    if participant.is_test and participant.preview_skip_delay:
        # a pilot that skips the delay: released now, so the preview goes on to the report
        Participant.objects.filter(pk=participant.pk, submitted_at__isnull=True).update(
            submitted_at=now,
            release_due_at=now,
            released_at=now,
            return_deadline_at=now + timedelta(days=int(participant.study.return_deadline_days)),
        )
        participant.refresh_from_db()
        return
    Participant.objects.filter(pk=participant.pk, submitted_at__isnull=True).update(
        submitted_at=now, release_due_at=due_at(participant.study, now)
    )
    participant.refresh_from_db()


def link_of(participant: Participant) -> str:
    """The participant's return link, absolute (``STUDYAPP_BASE_URL``)."""
    base = str(getattr(settings, "STUDYAPP_BASE_URL", "http://127.0.0.1:8000")).rstrip("/")
    return base + reverse("participant", args=[participant.code])


def local_time(study: Study, when: datetime) -> str:
    """A time as participants read it: in the study's time zone, with the zone and its UTC
    offset ("2030-05-01 18:00 (Asia/Tokyo, UTC+09:00)"), so nobody has to convert it."""
    try:
        zone = ZoneInfo(study.time_zone or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        zone = ZoneInfo("UTC")
    local = when.astimezone(zone)
    offset = local.strftime("%z") or "+0000"
    return f"{local:%Y-%m-%d %H:%M} ({zone.key}, UTC{offset[:3]}:{offset[3:]})"


def mail_subject(participant: Participant, subject: str) -> str:
    """The participant-facing title (in their language) before the subject (the internal
    title never reaches participants)."""
    title = str(participant.page_texts.get("title", "")).strip()
    return f"{title}: {subject}" if title else subject


def sender() -> str:
    """The e-mails' sender (setting ``STUDY_EMAIL_FROM``, else ``DEFAULT_FROM_EMAIL``)."""
    return str(
        getattr(settings, "STUDY_EMAIL_FROM", "") or getattr(settings, "DEFAULT_FROM_EMAIL", "")
    )


def _mail(participant: Participant, what: str, link: str) -> bool:
    """One e-mail to the participant's address, in their language; False on failure."""
    if not participant.contact_email:
        return False
    study = participant.study
    with translation.override(participant.page_language):
        # with their earlier answers piped in, as on their pages
        texts = survey_logic.piped_texts(
            participant, participant.page_texts, participant.page_language
        )
        if what == "link":
            subject = _("Your application is under review")
            body = str(texts.get("under_review") or _("Your application is under review."))
        elif what == "released":
            subject = _("The result of your application is ready")
            body = str(texts.get("released") or _("The result of your application is ready."))
        else:
            subject = _("Reminder: the result of your application is waiting for you")
            body = str(texts.get("released") or _("The result of your application is ready."))
        body += "\n\n" + _("Your personal link: %(link)s") % {"link": link}
        if what == "link" and participant.release_due_at is not None:
            body += "\n" + _("The result is expected from %(date)s.") % {
                "date": local_time(study, participant.release_due_at)
            }
        if participant.return_deadline_at is not None:
            body += "\n" + _("Please open it before %(deadline)s.") % {
                "deadline": local_time(study, participant.return_deadline_at)
            }
        subject = mail_subject(participant, subject)
    try:
        send_mail(subject, body, sender(), [participant.contact_email])
    except Exception as exc:  # noqa: BLE001 - a mail server down must not stop the schedule
        log.warning("participant %s: %s e-mail not sent (%s)", participant.pk, what, exc)
        return False
    return True


def contact_set(*, participant: Participant, email: str, link: str) -> Participant:
    """Keep the participant's address for the release notice and send them their link now.

    A malformed address is refused (ReleaseError) and nothing is stored."""
    email = email.strip()
    try:
        validate_email(email)
    except ValidationError:
        raise ReleaseError(_("That is not an e-mail address; nothing was stored.")) from None
    if not is_held(participant) and not awaits_return(participant):
        raise ReleaseError(_("There is nothing to send to this address at the moment."))
    if participant.contact_email:  # one address, one mail: the page cannot relay spam
        raise ReleaseError(
            _("We already sent your link to %(email)s.") % {"email": participant.contact_email}
        )
    Participant.objects.filter(pk=participant.pk).update(contact_email=email)
    participant.contact_email = email
    _mail(participant, "link", link)
    return participant


def _end_expired(p: Participant, now: datetime) -> None:
    p.state = S.EXPIRED
    p.completion_code = outcomes.outcome_code(p.study, outcomes.STATE_OUTCOME[S.EXPIRED])
    p.finished_at = now
    p.contact_email = ""
    p.save()


def participant_return(*, participant: Participant, now: datetime) -> Participant:
    """The participant came back and read the report: their evaluations open."""
    with transaction.atomic():
        p = _locked_rows().get(pk=participant.pk)
        if p.return_deadline_at is not None and now >= p.return_deadline_at:
            if p.state in SECOND_SESSION:
                _end_expired(p, now)
            raise ReleaseError(_("The time to answer has passed."))
        if awaits_return(p):
            p.returned_at = now
            p.save(update_fields=["returned_at", "updated_at"])
    return p


def expire_if_due(*, participant: Participant, now: datetime) -> Participant:
    """Close a second session that is past its deadline (a visit, between two ticks)."""
    if (
        participant.return_deadline_at is None
        or now < participant.return_deadline_at
        or participant.state not in SECOND_SESSION
    ):
        return participant
    with transaction.atomic():
        p = _locked_rows().get(pk=participant.pk)
        if p.state in SECOND_SESSION and p.return_deadline_at and now >= p.return_deadline_at:
            _end_expired(p, now)
    return p


def _locked_rows() -> Any:
    """A participant under a lock on their own row (not the shared study row, which every
    participant's request would then queue for), with the study read without its pool and
    model file."""
    large = [f"study__{name}" for name in study_cache.STUDY_LARGE]
    return Participant.objects.select_for_update(of=("self",)).select_related("study").defer(*large)


def _delayed_participants() -> Any:
    return Participant.objects.select_related("study").filter(
        study__kind="recourse", study__release_mode="delayed"
    )


def _to_release(now: datetime) -> list[int]:
    """Held participants whose time has come and whose plans are ready (a task still running
    is released at a later tick)."""
    rows = _delayed_participants().filter(
        released_at__isnull=True,
        release_due_at__lte=now,
        state__in=(S.EVALUATING, S.NO_RECOURSE),
    )
    return list(rows.order_by("pk").values_list("pk", flat=True))


def release_due(now: datetime) -> list[int]:
    """Release every held participant whose time has come and whose plans are ready."""
    released = []
    for pk in _to_release(now):
        with transaction.atomic():
            p = _locked_rows().get(pk=pk)
            if p.released_at is not None:
                continue
            p.released_at = now
            p.return_deadline_at = now + timedelta(days=int(p.study.return_deadline_days))
            p.save(update_fields=["released_at", "return_deadline_at", "updated_at"])
        _mail(p, "released", link_of(p))
        released.append(pk)
    return released


def _to_remind(now: datetime) -> list[Participant]:
    """Released participants who have not come back and are due a reminder."""
    rows = (
        _delayed_participants()
        .filter(
            released_at__isnull=False,
            returned_at__isnull=True,
            state=S.EVALUATING,
            return_deadline_at__gt=now,
            study__reminder_every_days__gt=0,
        )
        .exclude(contact_email="")
        .order_by("pk")
    )
    due = []
    for p in rows:
        if p.reminders_sent >= p.study.max_reminders:
            continue
        last = p.last_reminder_at or p.released_at
        if now - last < timedelta(days=p.study.reminder_every_days):
            continue
        due.append(p)
    return due


def remind_due(now: datetime) -> list[int]:
    """E-mail a reminder to released participants who have not come back, every
    `reminder_every_days`, at most `max_reminders` times, never after the deadline."""
    sent = []
    for p in _to_remind(now):
        Participant.objects.filter(pk=p.pk).update(
            reminders_sent=p.reminders_sent + 1, last_reminder_at=now
        )
        _mail(p, "reminder", link_of(p))
        sent.append(p.pk)
    return sent


def _to_expire(now: datetime) -> Any:
    rows = _delayed_participants().filter(return_deadline_at__lte=now, state__in=SECOND_SESSION)
    return rows.order_by("pk")


def expire_due(now: datetime) -> list[int]:
    """End every second session past its deadline with the expired outcome."""
    expired = []
    for p in _to_expire(now):
        if expire_if_due(participant=p, now=now).state == S.EXPIRED:
            expired.append(p.pk)
    return expired


def _to_forget() -> list[int]:
    done = _delayed_participants().exclude(contact_email="").exclude(state__in=SECOND_SESSION)
    done = done.exclude(state__in=(S.DECISION, S.WAITING))
    done = done.exclude(state=S.NO_RECOURSE, released_at__isnull=True)
    return list(done.order_by("pk").values_list("pk", flat=True))


def forget_addresses(now: datetime) -> list[int]:
    """Addresses are kept only while there is something to send: a finished participant's
    is deleted, with a deletion receipt per study (as the retention schedule's)."""
    ids = _to_forget()
    by_study: dict[int, list[int]] = {}
    for pk, study_id in Participant.objects.filter(pk__in=ids).values_list("pk", "study_id"):
        by_study.setdefault(study_id, []).append(pk)
    for study in Study.objects.filter(pk__in=by_study):
        with transaction.atomic():
            erase(
                study=study, participant_ids=by_study[study.pk], classes=["contact"],
                by=DeletionReceipt.By.SCHEDULE, rule=FORGET_RULE, as_of=now,
            )  # fmt: skip
    return ids


def tick(*, now: datetime) -> dict[str, list[int]]:
    """One run of the schedule: release, remind, expire, forget the addresses of those who
    finished (Celery beat calls it every few minutes; tests call it with their own clock)."""
    return {
        "released": release_due(now),
        "reminded": remind_due(now),
        "expired": expire_due(now),
        "forgotten": forget_addresses(now),
    }


def tick_preview(*, now: datetime) -> dict[str, list[int]]:
    """What `tick` would do at `now`, the same keys and ids, changing nothing and sending
    nothing (``release_due --dry-run``). A tick's steps do not feed each other (a participant
    released now is neither reminded nor expired in the same tick), so each list is what
    that step would touch."""
    return {
        "released": _to_release(now),
        "reminded": [p.pk for p in _to_remind(now)],
        "expired": list(_to_expire(now).values_list("pk", flat=True)),
        "forgotten": _to_forget(),
    }


def first_session_outcome(participant: Participant) -> dict[str, str]:
    """What the "under review" page gives a delayed participant leaving after the first
    session: its code (panels pay for that session too) and the panel's return link, and
    the expected release time in the study's time zone."""
    study = participant.study
    code = outcomes.outcome_code(study, "first_session")
    link = outcomes.outcome_link(study, "first_session", code) if code else ""
    due = participant.release_due_at
    return {
        "first_code": code,
        "first_redirect": link,
        "due_text": local_time(study, due) if due is not None else "",
    }
