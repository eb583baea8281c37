"""The study's retention rules: how long each class of a participant's data is kept, counted
from a stated event, so that a storage limit can be named, measured and shown to an ethics
board (GDPR Art. 5(1)(e)).

A rule is a period in whole days and the event it counts from: the participant's end
(`completion`: the time their study ended, whichever way: completed, screened out,
withdrew, expired, ...) or the study's close (`study_close`). A class without a period is
kept until someone deletes it (the default, so a study made before these rules is
unchanged). `studyapp.retention` deletes what is due; this module only states and checks
the rules, and says in words what a combination means.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
)
from pydantic_core import PydanticCustomError

#: the data classes a rule may name, in the order a run deletes them (the whole participant
#: first: what it deletes, no later rule finds again)
DATA_CLASSES = ("participant", "answers", "free_text", "paradata", "panel_id", "contact")
#: the events a period counts from
EVENTS = ("completion", "study_close")
#: the longest period a rule may state (100 years)
MAX_DAYS = 36_500
#: a class as words, for receipts, notes and the console
CLASS_WORDS = {
    "participant": "the whole participant",
    "answers": "the answers",
    "free_text": "the free-text answers",
    "paradata": "the paradata",
    "panel_id": "the panel id",
    "contact": "the contact address",
}
EVENT_WORDS = {"completion": "the participant's end", "study_close": "the study's close"}


def _days(value: int | None) -> int | None:
    if value is not None and not 0 <= value <= MAX_DAYS:
        raise PydanticCustomError(
            "retention_days",
            "{problem}",
            {"problem": f"{value} days: a period is 0 to {MAX_DAYS} whole days (blank: no limit)"},
        )
    return value


Days = Annotated[int | None, AfterValidator(_days)]


class RetentionRule(BaseModel):
    """How long one class is kept: `days` after the event `after` (blank days: no limit)."""

    model_config = ConfigDict(extra="forbid", title="Retention rule")

    days: Days = Field(
        None,
        description="Days kept after the event; 0: deleted at the first daily run after it; "
        "blank: kept until deleted by hand.",
    )
    after: Literal["completion", "study_close"] = Field(
        "completion",
        description="completion: the participant's end (completed, screened out, withdrew, "
        "expired, ...); study_close: the study's close.",
    )

    def words(self) -> str:
        """The rule in words: '30 days after the participant's end', or 'no limit'."""
        if self.days is None:
            return "no limit"
        return f"{self.days} days after {EVENT_WORDS[self.after]}"


def _rule(title: str, holds: str) -> Any:
    return Field(default_factory=RetentionRule, title=title, description=holds)


class Retention(BaseModel):
    """A retention rule per data class; stored with the rules that have a period only."""

    model_config = ConfigDict(extra="forbid", title="Retention")

    participant: RetentionRule = _rule(
        "The whole participant",
        "The participant's row and everything of it (answers, plans, ratings, visits); the "
        "receipts and the withdrawal log stay. A period shorter than a part's deletes that "
        "part with the whole, earlier.",
    )
    answers: RetentionRule = _rule(
        "Answers",
        "Screening answers, profile, plans shown and their ratings, questionnaire answers, "
        "attention answers; the bare row (state, condition, times) stays counted.",
    )
    free_text: RetentionRule = _rule(
        "Free-text answers", "The why-answers of the ratings and the free-text items."
    )
    paradata: RetentionRule = _rule(
        "Paradata",
        "Page visits (entered, left, views, time-outs), seconds on each plan page, device "
        "class and window size, the integrity signals (pastes, tab switches, typing times).",
    )
    panel_id: RetentionRule = _rule(
        "Panel id", "The panel id (e.g. PROLIFIC_PID) and the other panel parameters."
    )
    contact: RetentionRule = _rule(
        "Contact address", "The e-mail address given for a delayed release's return link."
    )

    @model_serializer(mode="wrap")
    def _stored(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Only the rules with a period: a study without any stores `{}`."""
        return {k: v for k, v in handler(self).items() if v.get("days") is not None}

    def rules(self) -> dict[str, RetentionRule]:
        """Data class -> its rule, the classes with a period only, in deletion order."""
        rules = {name: getattr(self, name) for name in DATA_CLASSES}
        return {name: rule for name, rule in rules.items() if rule.days is not None}


assert tuple(Retention.model_fields) == DATA_CLASSES


def retention_of(stored: Mapping[str, Any] | None) -> Retention:
    """The rules a study row stores (none where the stored value does not validate: the
    settings refuse such a value, so it can only be older than the rules; deleting by a rule
    nobody accepted would be worse than keeping)."""
    try:
        return Retention.model_validate(dict(stored or {}))
    except (ValidationError, TypeError, ValueError):
        return Retention()


def due_before(rule: RetentionRule, now: datetime) -> datetime:
    """Events at or before this time are due under `rule` at `now`."""
    return now - timedelta(days=rule.days or 0)


def retention_notes(retention: Retention) -> list[str]:
    """What a combination of rules means, where it may surprise: a part kept longer than the
    whole participant goes with the whole, earlier; rules on different events take effect
    at whichever comes first."""
    whole = retention.participant
    if whole.days is None:
        return []
    notes = []
    for name in DATA_CLASSES[1:]:
        part = getattr(retention, name)
        if part.days is None:
            continue
        if part.after == whole.after and part.days > whole.days:
            notes.append(
                f"retention.{name}: {part.words()}, but the whole participant goes "
                f"{whole.words()}, taking {CLASS_WORDS[name]} with it "
                f"{part.days - whole.days} days earlier than this rule says"
            )
        elif part.after != whole.after:
            notes.append(
                f"retention.{name}: {part.words()}, the whole participant {whole.words()}: "
                f"whichever comes first deletes {CLASS_WORDS[name]}"
            )
    return notes
