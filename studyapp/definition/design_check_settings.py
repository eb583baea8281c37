"""The study's design-check thresholds: past them, the design check warns, and going live asks
the researcher to acknowledge each warning (`studyapp.generation.design_check`).

Shares in [0, 1]; the defaults (`recourse_engine.design_check`) warn when the decision model
approves more than 10% of the sampled profiles, or a method shows its own plan to fewer than
80% of the rejected ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from recourse_engine.design_check import APPROVAL_RATE_ABOVE, OWN_PLAN_RATE_BELOW, Thresholds

Share = Annotated[float, Field(ge=0.0, le=1.0)]


class DesignCheckThresholds(BaseModel):
    """Where the design check warns."""

    model_config = ConfigDict(extra="forbid", title="Design-check thresholds")

    approval_rate_above: Share = Field(
        APPROVAL_RATE_ABOVE,
        description="Warn when the decision model approves more than this share of the "
        "sampled profiles (0..1).",
    )
    own_plan_rate_below: Share = Field(
        OWN_PLAN_RATE_BELOW,
        description="Warn when a method shows its own plan to fewer than this share of the "
        "rejected profiles (0..1).",
    )


def thresholds_of(stored: Mapping[str, Any] | None) -> Thresholds:
    """The engine's thresholds from a study row's stored value (defaults for what is missing;
    a stored value the rules refuse falls back to the defaults rather than hide warnings)."""
    try:
        cfg = DesignCheckThresholds.model_validate(dict(stored or {}))
    except ValidationError:
        cfg = DesignCheckThresholds()
    return Thresholds(cfg.approval_rate_above, cfg.own_plan_rate_below)
