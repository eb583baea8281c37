"""Page time-outs (oTree-style): a page type may submit itself after some seconds with what
the participant entered, recording ``timeout_happened`` on the page visit.

Only pages whose answers may be left incomplete can time out: the scenario (nothing to
answer) and the researcher's questionnaires (an unanswered item is stored as missing). The
consent, screening, profile and evaluation pages cannot: a consent cannot be given by a
clock, and eligibility, the profile and the ratings are what the study needs complete.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

#: page types that may time out (the participant's state of that page)
TIMED_PAGES = ("scenario", "questions_pre", "questions_post")

Seconds = Annotated[int, Field(ge=5, le=24 * 3600)]


class PageTimeouts(BaseModel):
    """Seconds before a page submits itself (none: it waits for the participant)."""

    model_config = ConfigDict(extra="forbid", title="Page time-outs")

    scenario: Seconds | None = Field(None, description="The scenario page.")
    questions_pre: Seconds | None = Field(None, description="The questionnaire before it.")
    questions_post: Seconds | None = Field(None, description="The questionnaire at the end.")

    def stored(self) -> dict[str, int]:
        return {k: v for k, v in self.model_dump().items() if v is not None}


assert tuple(PageTimeouts.model_fields) == TIMED_PAGES


#: page types that may ask for a minimum time before their Continue is accepted
MINIMUM_PAGES = ("decision",)


class PageMinimums(BaseModel):
    """Seconds a page is shown before its Continue is accepted (0: at once). The decision
    page's rejection is the study's manipulation: a minimum makes sure it is read."""

    model_config = ConfigDict(extra="forbid", title="Minimum time on a page")

    decision: Annotated[int, Field(ge=0, le=3600)] = Field(
        0, description="The decision page (the model's rejection)."
    )

    def stored(self) -> dict[str, int]:
        return {k: v for k, v in self.model_dump().items() if v}


assert tuple(PageMinimums.model_fields) == MINIMUM_PAGES
