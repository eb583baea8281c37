"""The multi-wave study's settings (``waves``, kind ``multi_wave``; docs/waves.md): how many
waves, when each opens, the decision model between waves per condition and whether it is
announced, the effort question, and what a reported change that breaks a constraint does.

Written once here and read by `StudyConfig` (so the console, the API and the study file
accept and refuse the same things); what the waves do to participants is
`participation.waves`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

#: the model between waves (the engine's `recourse_engine.model_updates.MODEL_POLICIES`)
MODEL_POLICIES = ("frozen", "retrained", "multiplicity")
#: what a reported change that breaks an item's constraint does
CONSTRAINT_BREAKS = ("refuse", "mark")
MIN_WAVES, MAX_WAVES = 2, 5
MAX_DAYS = 365


def _problem(message: str, at: str = "") -> PydanticCustomError:
    return PydanticCustomError("waves", "{problem}", {"problem": message, "at": at})


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class WaveRelease(_Strict):
    """When one wave (2..N) opens: days after the participant's previous wave, or a date."""

    model_config = ConfigDict(title="Wave release")

    after_days: Annotated[int, Field(ge=0, le=MAX_DAYS)] | None = Field(
        None, description="Days after the participant finished the previous wave."
    )
    at: datetime | None = Field(None, description="A fixed date (with its time zone).")

    @model_validator(mode="after")
    def _one(self) -> WaveRelease:
        if (self.after_days is None) == (self.at is None):
            raise _problem("give either after_days or a date (at), exactly one")
        if self.at is not None and (self.at.tzinfo is None or self.at.utcoffset() is None):
            raise _problem("give the date with its time zone", ".at")
        return self


class WavePolicy(_Strict):
    """The decision model between waves for one condition (blank: every other one)."""

    model_config = ConfigDict(title="Model between waves")

    condition: Annotated[str, Field(max_length=60)] = Field(
        "", description="A condition's name; blank: the study's participants without one."
    )
    model: Literal[MODEL_POLICIES] = Field(  # type: ignore[valid-type]
        "frozen", description="frozen: the study's model in every wave; retrained: on the "
        "pool plus the last wave's updated profiles; multiplicity: a near-equal model of "
        "another seed."
    )  # fmt: skip
    announce: dict[Literal["en", "ja"], Annotated[str, Field(max_length=5000)]] = Field(
        default_factory=dict,
        description="Language -> the announcement shown when they return (none: unannounced).",
    )


class WaveSettings(_Strict):
    """A multi-wave study: N waves, a release per wave after the first, model policies."""

    model_config = ConfigDict(title="Multi-wave settings")

    count: Annotated[int, Field(ge=MIN_WAVES, le=MAX_WAVES)] = Field(
        description="Number of waves (2..5); wave 1 is the one-session recourse flow."
    )
    schedule: list[WaveRelease] = Field(
        description="One release per wave after the first (waves 2..N), in order."
    )
    policies: Annotated[list[WavePolicy], Field(max_length=50)] = Field(
        default_factory=list, description="The model between waves per condition."
    )
    effort: bool = Field(False, description="Ask the effort (1..7) of every reported change.")
    constraint_breaks: Literal[CONSTRAINT_BREAKS] = Field(  # type: ignore[valid-type]
        "refuse", description="A reported change against an item's constraint: refuse it "
        "(the participant corrects it) or accept it and mark it in changes.csv."
    )  # fmt: skip

    @model_validator(mode="after")
    def _schedule_in_order(self) -> WaveSettings:
        if len(self.schedule) != self.count - 1:
            raise _problem(
                f"{len(self.schedule)} release(s) given for {self.count} waves: give one per "
                f"wave after the first ({self.count - 1})",
                ".schedule",
            )
        last: tuple[int, datetime] | None = None
        for i, release in enumerate(self.schedule):
            if release.at is None:
                continue
            if last is not None and release.at <= last[1]:
                raise _problem(
                    f"wave {i + 2} opens {release.at:%Y-%m-%d %H:%M %Z}, not after wave "
                    f"{last[0]} ({last[1]:%Y-%m-%d %H:%M %Z}): the schedule is out of order",
                    f".schedule[{i}].at",
                )
            last = (i + 2, release.at)
        seen: set[str] = set()
        for i, policy in enumerate(self.policies):
            if policy.condition in seen:
                raise _problem(
                    f"a second policy for condition {policy.condition!r}",
                    f".policies[{i}].condition",
                )
            seen.add(policy.condition)
        return self


def waves_problem(cfg: Any) -> tuple[str, str] | None:
    """(setting path, problem) for the first rule between the kind, the waves and the
    conditions that `cfg` (a StudyConfig) breaks; None when it keeps them all."""
    waves = getattr(cfg, "waves", None)
    if cfg.kind == "multi_wave" and waves is None:
        return "waves", "a multi_wave study needs its waves (count and schedule)"
    if cfg.kind != "multi_wave" and waves is not None:
        return "waves", "only a multi_wave study has waves (set kind to multi_wave)"
    if waves is None:
        return None
    if cfg.release_mode != "immediate":
        return "release_mode", "a multi_wave study schedules its waves itself: use immediate"
    names = {c.name for c in cfg.conditions}
    for i, policy in enumerate(waves.policies):
        if policy.condition and policy.condition not in names:
            return (
                f"waves.policies[{i}].condition",
                f"no condition named {policy.condition!r} (conditions: "
                f"{', '.join(sorted(names)) or 'none'})",
            )
    return None
