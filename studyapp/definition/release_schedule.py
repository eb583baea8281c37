"""The study kind and the release schedule (delayed-release mode) as settings of the study
configuration: their types and the rules between them, written once.

A delayed study needs exactly one of a release date or a number of days after submission; a
fixed date must lie in the future when it is set (a past date would release everyone at
once and is almost always a typo) but may have passed once it is kept unchanged (the study
is then releasing at each tick). Only a recourse study shows plans, so only it can be
delayed. What the schedule does to participants is `participation.release`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ValidationInfo
from pydantic_core import PydanticCustomError

from studyapp.definition import screening
from studyapp.release_models import RELEASE_MODES, STUDY_KINDS

#: the longest delay or deadline a study may set (days)
MAX_DAYS = 365
KIND_NAMES = tuple(name for name, _ in STUDY_KINDS)
MODE_NAMES = tuple(name for name, _ in RELEASE_MODES)
#: the settings of the schedule (row fields of the same name)
RELEASE_SETTINGS = (
    "release_mode", "release_at", "release_after_days", "reminder_every_days", "max_reminders",
    "return_deadline_days",
)  # fmt: skip


def _problem(kind: str, message: str, at: str = "") -> PydanticCustomError:
    return PydanticCustomError(kind, "{problem}", {"problem": message, "at": at})


def _in_range(low: int, high: int, unit: str = "", *, show: bool = False) -> Any:
    """A whole number low..high, refused in the schedule's own words."""

    def check(value: int | None) -> int | None:
        if value is not None and not low <= value <= high:
            got = f", got {value}" if show else ""
            raise _problem("release", f"must be {low}..{high}{unit}{got}")
        return value

    return AfterValidator(check)


StudyKind = Literal[KIND_NAMES]  # type: ignore[valid-type]
ReleaseMode = Literal[MODE_NAMES]  # type: ignore[valid-type]
AfterDays = Annotated[int | None, _in_range(0, MAX_DAYS, " days", show=True)]
ReminderDays = Annotated[int, _in_range(0, MAX_DAYS, " days")]
MaxReminders = Annotated[int, _in_range(0, 10)]
DeadlineDays = Annotated[int, _in_range(1, MAX_DAYS, " days")]


def release_at_check(value: datetime | None, info: ValidationInfo) -> datetime | None:
    """A date with its time zone; a new one in the future of the context's `now` (no `now`
    in the context: not checked against the clock)."""
    if value is None:
        return value
    if value.tzinfo is None or value.utcoffset() is None:
        raise _problem("release", "give the release date with its time zone")
    context = info.context if isinstance(info.context, Mapping) else {}
    now = context.get("now")
    if now is not None and value != context.get("stored_release_at") and value <= now:
        raise _problem(
            "release",
            f"the release date {value:%Y-%m-%d %H:%M} is in the past "
            f"(now {now:%Y-%m-%d %H:%M} UTC); choose a future date",
        )
    return value


ReleaseAt = Annotated[datetime | None, AfterValidator(release_at_check)]


def schedule_problem(cfg: Any) -> tuple[str, str] | None:
    """(setting, problem) for the first rule between the kind and the schedule that `cfg`
    (a StudyConfig) breaks; None when it keeps them all."""
    if cfg.release_mode == "delayed":
        if cfg.release_at is None and cfg.release_after_days is None:
            return "release_at", "a delayed release needs a date or a number of days"
        if cfg.release_at is not None and cfg.release_after_days is not None:
            return "release_after_days", "give a release date or a number of days, not both"
        if cfg.kind != "recourse":
            return "release_mode", "only a recourse study can release plans later"
    if cfg.reminder_every_days and cfg.reminder_every_days >= cfg.return_deadline_days:
        return "reminder_every_days", "a reminder must come before the deadline"
    return None


def kind_problem(kind: str, questions: Mapping[str, Mapping[str, Any]] | None) -> str | None:
    """Why the study's screening questions cannot serve `kind` (None: they can; no questions
    in the context: not checked)."""
    if kind != "pool_collection" or questions is None:
        return None
    return screening.pool_income_problem(list(questions.values()))
