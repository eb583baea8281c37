"""The study's switch for the integrity signals (`studyapp.integrity`): off by default.

Off, because the signals are behavioural paradata that a participant must be told about
before they are recorded (the consent page says so when the switch is on), so switching
them on for a study already running would record people who consented to less; a study
turns them on while it is a draft, and the switch is frozen once it is live."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

IntegritySignals = Annotated[
    bool,
    Field(
        description="Record, on the rating and question pages, paste events, leaving the "
        "window or tab, typing time and the time to each item's first answer (counts and "
        "durations only, never the pasted text); the consent page says so. Signals for the "
        "researcher, never automatic rejections.",
        title="Integrity signals",
    ),
]
