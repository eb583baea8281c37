"""Bots for the integrity signals: a human-paced participant, a speeder and a paster. Each
walks the real pages as `bots.Bot` does, takes its own time on each page (`think`: a real
sleep by default; a test passes a clock it advances) and, where the page carries the
integrity script, posts what the script would have recorded for its way of answering.

They exist to show that each signal flags its own kind and that a careful, human-paced
participant is flagged by none (tests/studyapp/integrity/test_integrity_bots.py)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from studyapp.integrity.payload import FIELD
from studyapp.simulation.bots import Bot

#: fields the bots answer on a plan's page whose time to a first answer they report
_NOT_ITEMS = ("page", "recourse", FIELD)
_OPENERS = (
    "Honestly", "To be fair", "From where I stand", "Thinking about my situation",
    "Looking at my budget", "In my case", "Given my job", "Realistically", "As far as I can tell",
    "Considering my family",
)  # fmt: skip
_REASONS = (
    "this plan asks for changes I could plan for", "the changes look hard to reach soon",
    "moving up one step seems doable with effort", "a new job is not something I can force",
    "the income part worries me most", "I would need help from my bank to do this",
    "my savings would have to grow a lot first", "I already tried something like this",
    "it fits what I hoped to do anyway", "the plan ignores my commute and my children",
)  # fmt: skip


class PacedBot(Bot):
    """A careful participant: reads each plan for half a minute or so, types its reasons at
    a typing pace, now and then glances at another window; no pastes."""

    #: the bot's kind, as the simulation and the tests name it
    kind = "human_paced"
    #: seconds per page: (plan pages, question pages, other pages) as (low, high)
    seconds = ((25.0, 60.0), (15.0, 40.0), (6.0, 20.0))
    #: milliseconds per typed character
    key_ms = (180, 320)

    def __init__(
        self, study: Any, *, think: Callable[[float], None] = time.sleep, **kwargs: Any
    ) -> None:
        super().__init__(study, **kwargs)
        self.think = think
        #: how long this person has been in their job, from their seed: a detail of their own
        #: in each reason they write, so two careful people never write the same text (the
        #: identical-text signal looks for texts shared across participants)
        seed = int(kwargs["seed"])
        self.tenure = f"{seed // 12} years and {seed % 12} months in my job"

    def page_seconds(self, page: str) -> float:
        plan, questions, other = self.seconds
        low, high = (
            plan if page.startswith("evaluation-") else questions if page.startswith("questions_")
            else other
        )  # fmt: skip
        return float(self.rng.uniform(low, high))

    def why_text(self) -> str:
        opener = _OPENERS[int(self.rng.integers(len(_OPENERS)))]
        reason = _REASONS[int(self.rng.integers(len(_REASONS)))]
        months = int(self.rng.integers(2, 37))
        return f"{opener}, {reason}; maybe in {months} months, after {self.tenure}."

    def field_signals(self, name: str, value: Any, at_ms: int) -> dict[str, Any]:
        """What the script records for one answered field: typed text, or a choice."""
        if name.endswith("_why") or isinstance(value, str) and len(value) > 12:
            n = len(str(value))
            per_key = self.rng.uniform(*self.key_ms)
            return {"inputs": n, "typing_ms": int(n * per_key), "first_ms": at_ms}
        return {"inputs": 1, "first_ms": at_ms}

    def page_signals(self, page: str, data: dict[str, Any], seconds: float) -> dict[str, Any]:
        """The script's payload for this page, answered in `seconds`."""
        names = [n for n in data if n not in _NOT_ITEMS and not n.startswith("attention_")]
        total_ms = int(seconds * 1000)
        fields = {}
        for i, name in enumerate(names):
            at = int(total_ms * (i + 1) / (len(names) + 2))
            fields[name] = self.field_signals(name, data[name], at)
        glance = bool(self.rng.random() < 0.2)
        return {
            "v": 1,
            "page_ms": total_ms,
            "blurs": int(glance),
            "hidden": 0,
            "away_ms": int(self.rng.uniform(1000, 4000)) if glance else 0,
            "fields": fields,
        }

    def _answers(self, page: str, body: str) -> dict[str, Any]:
        data = super()._answers(page, body)
        if page.startswith("evaluation-"):
            data["acceptance_why"] = self.why_text()
            data["action_why"] = self.why_text()
        seconds = self.page_seconds(page)
        if f'name="{FIELD}"' in body:  # the study records the signals on this page
            data[FIELD] = json.dumps(self.page_signals(page, data, seconds))
        self.think(seconds)
        return data


class SpeederBot(PacedBot):
    """Clicks through: a second or two per page, a word or two as its reasons."""

    kind = "speeder"
    seconds = ((1.0, 3.0), (1.0, 3.0), (0.5, 2.0))
    key_ms = (60, 90)

    def why_text(self) -> str:
        return ("ok", "fine", "good", "no", "yes", "not sure")[int(self.rng.integers(6))]


class PasterBot(PacedBot):
    """Takes a human's time but pastes its reasons (written elsewhere, e.g. by a language
    model): one paste per reason, no typing."""

    kind = "paster"

    def why_text(self) -> str:
        return (
            "As an applicant, I appreciate that this plan offers a clear and actionable path. "
            + super().why_text()
        )

    def field_signals(self, name: str, value: Any, at_ms: int) -> dict[str, Any]:
        if name.endswith("_why"):
            n = len(str(value))
            return {"pastes": 1, "pasted_chars": n, "inputs": 1, "typing_ms": 0, "first_ms": at_ms}
        return super().field_signals(name, value, at_ms)


#: the bots by kind
BOT_KINDS: dict[str, type[PacedBot]] = {b.kind: b for b in (PacedBot, SpeederBot, PasterBot)}
