"""Bots for a multi-wave study (`participation.waves`): they walk wave 1 as any bot does,
say which plan they will follow, leave, and, when their next wave is open, come back and
report what they changed: their plan implemented fully, partly (each planned change missed
with probability `rate`: the engine's noise model, `recourse_engine.implementation`) or not
at all. A pilot of a 3-wave study runs in seconds with the clock advanced between waves
(`waves.tick(now=...)`), as `pilot` does.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal

from recourse_engine.implementation import implement_plan
from studyapp.models import Study
from studyapp.simulation.bots import Bot, BotError, BotResult

Mode = Literal["full", "partial", "none"]
_FOLLOW = re.compile(r'name="followed" value="([^"]+)"')
_FIELD = re.compile(r"<(?:select|input)\b[^>]*>")
_ATTR = re.compile(r'([a-z-]+)="([^"]*)"')
#: the page a bot leaves at until its next wave
AWAY = "wave_away"


class WaveBot(Bot):
    """A bot that acts on the plan it chose between waves (`mode`, `rate`); it follows a
    plan with probability `follow_rate` (else none)."""

    #: it leaves between waves (and comes back with `resume`)
    leaves_at = (*Bot.leaves_at, AWAY)

    def __init__(
        self,
        study: Study,
        *,
        seed: int,
        mode: Mode = "full",
        rate: float = 0.0,
        follow_rate: float = 1.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(study, seed=seed, **kwargs)
        self.mode = mode
        self.rate = rate
        self.follow_rate = follow_rate
        self.url = ""
        self.result = BotResult()

    def run(self) -> BotResult:
        """Wave 1, up to leaving (outcome ``wave_away``) or an end page."""
        self.url = self._arrive()
        self.result = BotResult(code=self.url.rstrip("/").rsplit("/", 1)[-1])
        return self._walk(self.url, self.result)

    def resume(self) -> BotResult:
        """Come back by link: the next wave, up to leaving again or an end page."""
        if not self.url:
            raise BotError("the bot has not started yet")
        self.result.outcome = ""
        return self._walk(self.url, self.result)

    def _answers(self, page: str, body: str) -> dict[str, Any]:
        if page == "wave_follow":
            return self._follow(body)
        if page == "wave_changes":
            return self._changes(body)
        return super()._answers(page, body)

    def _follow(self, body: str) -> dict[str, Any]:
        plans = [v for v in _FOLLOW.findall(body) if v != "none"]
        chosen = "none"
        if plans and self.rng.random() < self.follow_rate:
            chosen = str(self.rng.choice(plans))
        return {"page": "wave_follow", "followed": chosen}

    def _changes(self, body: str) -> dict[str, Any]:
        """The plan implemented as the bot's mode says, reported per item ("" : no change)."""
        before: dict[str, int] = {}
        planned: dict[str, int] = {}
        efforts = False
        for tag in _FIELD.findall(body):
            attrs = dict(_ATTR.findall(tag))
            name = attrs.get("name", "")
            if name.startswith("effort_"):
                efforts = True
            if not name.startswith("item_"):
                continue
            key = name[len("item_") :]
            before[key] = int(float(attrs["data-before"]))
            if "data-planned" in attrs:
                planned[key] = int(float(attrs["data-planned"]))
        after = implement_plan(
            before, planned, self.schema, mode=self.mode, rate=self.rate, rng=self.rng
        )
        data: dict[str, Any] = {"page": "wave_changes"}
        for key, old in before.items():
            new = after[key]
            data[f"item_{key}"] = "" if new == old else str(new)
            if efforts and new != old:
                data[f"effort_{key}"] = str(int(self.rng.integers(1, 8)))
        return data


def pilot(
    bots: list[WaveBot], *, waves: int, advance: Callable[[int], datetime]
) -> list[BotResult]:
    """Run `bots` through up to `waves` waves: wave 1, then per later wave the clock moved
    on (`advance(k)`: the time at which wave k is due, given to `waves.tick`) and every bot
    that left comes back. Returns each bot's last result."""
    from studyapp.participation import waves as wave_schedule

    results = [bot.run() for bot in bots]
    for k in range(2, waves + 1):
        wave_schedule.tick(now=advance(k))
        for i, bot in enumerate(bots):
            if results[i].outcome == AWAY:
                results[i] = bot.resume()
    return results
