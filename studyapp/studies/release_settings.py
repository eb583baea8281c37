"""A study's release schedule (delayed-release mode): checked, then written all or nothing.

A fixed release date must lie in the future when it is set (a past date would release
everyone at once and is almost always a typo), and a delayed study needs exactly one of a
date or a number of days. Participants still waiting follow a changed schedule. See
`participation.release` for what the schedule does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from studyapp.models import Participant, Study
from studyapp.participation import release
from studyapp.studies.errors import StudyError

#: the longest delay or deadline a study may set (days)
MAX_DAYS = 365


class ReleaseSettingsError(StudyError):
    """Release settings that cannot be used; `problems` maps a setting to its message."""

    def __init__(self, problems: dict[str, str]) -> None:
        super().__init__("; ".join(f"{k}: {v}" for k, v in problems.items()))
        self.problems = problems


@dataclass(frozen=True)
class ReleaseSettings:
    mode: str = "immediate"
    release_at: datetime | None = None
    release_after_days: int | None = None
    reminder_every_days: int = 0
    max_reminders: int = 2
    return_deadline_days: int = 14

    @classmethod
    def of(cls, study: Study) -> ReleaseSettings:
        return cls(
            mode=study.release_mode,
            release_at=study.release_at,
            release_after_days=study.release_after_days,
            reminder_every_days=study.reminder_every_days,
            max_reminders=study.max_reminders,
            return_deadline_days=study.return_deadline_days,
        )


def release_settings_check(
    new: ReleaseSettings, *, now: datetime, current: ReleaseSettings | None = None
) -> dict[str, str]:
    """Every problem of a schedule, by setting (empty: usable). A release date that is kept
    unchanged may have passed already (the study is then releasing at each tick)."""
    problems: dict[str, str] = {}
    if new.mode not in ("immediate", "delayed"):
        problems["release_mode"] = f"must be 'immediate' or 'delayed', not {new.mode!r}"
        return problems
    changed_date = current is None or new.release_at != current.release_at
    if new.release_at is not None:
        if timezone.is_naive(new.release_at):
            problems["release_at"] = "give the release date with its time zone"
        elif changed_date and new.release_at <= now:
            problems["release_at"] = (
                f"the release date {new.release_at:%Y-%m-%d %H:%M} is in the past "
                f"(now {now:%Y-%m-%d %H:%M} UTC); choose a future date"
            )
    days = new.release_after_days
    if days is not None and not 0 <= days <= MAX_DAYS:
        problems["release_after_days"] = f"must be 0..{MAX_DAYS} days, got {days}"
    if new.mode == "delayed":
        if new.release_at is None and days is None:
            problems["release_at"] = "a delayed release needs a date or a number of days"
        elif new.release_at is not None and days is not None:
            problems["release_after_days"] = "give a release date or a number of days, not both"
    if not 1 <= new.return_deadline_days <= MAX_DAYS:
        problems["return_deadline_days"] = f"must be 1..{MAX_DAYS} days"
    if not 0 <= new.reminder_every_days <= MAX_DAYS:
        problems["reminder_every_days"] = f"must be 0..{MAX_DAYS} days"
    elif new.reminder_every_days and new.reminder_every_days >= new.return_deadline_days:
        problems["reminder_every_days"] = "a reminder must come before the deadline"
    if not 0 <= new.max_reminders <= 10:
        problems["max_reminders"] = "must be 0..10"
    return problems


def _reschedule(study: Study) -> None:
    """Participants still waiting for their release follow the new schedule."""
    waiting = list(
        Participant.objects.filter(
            study=study, submitted_at__isnull=False, released_at__isnull=True
        ).only("pk", "submitted_at")
    )
    for p in waiting:
        p.release_due_at = release.due_at(study, p.submitted_at)
    Participant.objects.bulk_update(waiting, ["release_due_at"], batch_size=500)


def study_set_release(*, study: Study, settings: ReleaseSettings, now: datetime) -> Study:
    """Write a checked schedule; any problem raises ReleaseSettingsError and changes nothing.

    Pool-collection studies show no plans, so they cannot be delayed."""
    problems = release_settings_check(settings, now=now, current=ReleaseSettings.of(study))
    if settings.mode == "delayed" and study.kind != "recourse":
        problems["release_mode"] = "only a recourse study can release plans later"
    if problems:
        raise ReleaseSettingsError(problems)
    with transaction.atomic():
        locked = Study.objects.select_for_update().get(pk=study.pk)
        locked.release_mode = settings.mode
        locked.release_at = settings.release_at
        locked.release_after_days = settings.release_after_days
        locked.reminder_every_days = settings.reminder_every_days
        locked.max_reminders = settings.max_reminders
        locked.return_deadline_days = settings.return_deadline_days
        locked.save()
        _reschedule(locked)
    study.refresh_from_db()
    return study
