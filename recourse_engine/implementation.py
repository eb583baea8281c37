"""What participants do with a plan between waves: the bots' noise model, and the check of a
change a participant reports.

People implement plans partly or differently (EXPECT, Pawelczyk et al. 2022; ROSE). The
bots of a multi-wave pilot follow `implement_plan`'s stated noise model, so an analysis of
their data can be checked against the rate that produced it:

* `full` adopts every planned value; `none` keeps the profile;
* `partial` adopts each planned change independently with probability 1 - rate; otherwise
  (probability `rate`) it keeps the old value or, with equal chance, moves one option (one
  unit of a numeric item) towards the planned value of an ordinal or numeric item when that
  is more than one option away (so "adopted" happens with
  probability exactly 1 - rate). Items the plan leaves alone never change.

A move towards the planned value lies between the old and the planned value, so it never
breaks a fixed item or an up/down constraint that the plan itself respects; a plan that
breaks one is refused.

`check_reported_change` is what a study says of a reported change: outside the item's
options, a change to a fixed item, a change against an up/down constraint, or None.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import numpy as np

from .schema import FeatureSchema, Item

#: how a bot implements its plan
IMPLEMENTATION_MODES = ("full", "partial", "none")
#: the flag a study that accepts a disallowed change marks it with (changes.csv `flag`)
CHANGE_FLAGS = ("outside", "fixed", "direction")


def _code_text(item: Item, value: float) -> str:
    if item.is_numeric or not float(value).is_integer() or not item.valid(np.array([value]))[0]:
        return repr(value)
    return f"{int(value)} ({item.label_of(value)!r})"


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        return None
    return float(value)


def change_problem(
    schema: FeatureSchema, item: str, before: object, after: object
) -> tuple[str, str] | None:
    """(flag, reason) for a reported change a study does not allow, None when it is
    allowed. The flag is one of `CHANGE_FLAGS` (an unknown item or a bad old value is
    flagged `outside` too)."""
    if item not in schema.keys:
        return "outside", f"unknown item {item!r}; profile items: {', '.join(schema.keys)}"
    it = schema.item(item)
    old, new = _number(before), _number(after)
    allowed = (
        f"a number in [{it.min_value:g}, {it.max_value:g}]"
        if it.is_numeric
        else f"an option code 1..{it.n_options}"
    )
    if old is None or not it.valid(np.array([old]))[0]:
        return "outside", f"item {item!r}: the old value {before!r} is not {allowed}"
    if new is None or not it.valid(np.array([new]))[0]:
        return "outside", f"item {item!r}: the new value {after!r} is not {allowed}"
    if new == old:
        return None
    move = f"from {_code_text(it, old)} to {_code_text(it, new)}"
    if it.constraint == "fixed":
        return "fixed", f"item {item!r} is fixed and cannot change ({move})"
    if it.constraint == "up" and new < old:
        return "direction", f"item {item!r} can only go up, not down ({move})"
    if it.constraint == "down" and new > old:
        return "direction", f"item {item!r} can only go down, not up ({move})"
    return None


def check_reported_change(
    schema: FeatureSchema, item: str, before: object, after: object
) -> str | None:
    """The reason a reported change is not allowed (outside the item's options, a fixed item,
    against the up/down constraint), or None."""
    problem = change_problem(schema, item, before, after)
    return None if problem is None else problem[1]


def _as_value(item: Item, value: float) -> int | float:
    return int(value) if float(value).is_integer() else float(value)


def implement_plan(
    profile: Mapping[str, int],
    plan: Mapping[str, int],
    schema: FeatureSchema,
    *,
    mode: Literal["full", "partial", "none"],
    rate: float,
    rng: np.random.Generator,
) -> dict[str, int]:
    """The profile after a bot implements `plan` (item -> planned value; items equal to the
    profile's are no change) with the noise model of this module. ValueError names a bad
    mode or rate, a profile or plan value that is no valid code, and a planned change that
    breaks the item's constraint."""
    if mode not in IMPLEMENTATION_MODES:
        raise ValueError(
            f"unknown implementation mode {mode!r}; expected one of {', '.join(IMPLEMENTATION_MODES)}"
        )
    if _number(rate) is None or not 0.0 <= float(rate) <= 1.0:
        raise ValueError(f"rate must be a number in [0, 1], got {rate!r}")
    missing = [k for k in schema.keys if k not in profile]
    if missing:
        raise ValueError(f"profile: missing item(s) {', '.join(missing)}")
    out: dict[str, int] = {}
    for key in schema.keys:
        problem = change_problem(schema, key, profile[key], profile[key])
        if problem is not None:
            raise ValueError(f"profile: {problem[1]}")
        out[key] = _as_value(schema.item(key), float(profile[key]))  # type: ignore[assignment]
    for key, value in plan.items():
        problem = change_problem(schema, key, profile.get(key, value), value)
        if problem is not None:
            raise ValueError(f"plan: {problem[1]}")
    if mode == "none":
        return out
    for key in schema.keys:  # schema order, so a seeded rng gives the same draws
        if key not in plan or float(plan[key]) == float(profile[key]):
            continue
        it = schema.item(key)
        old, target = float(profile[key]), float(plan[key])
        if mode == "full" or rng.random() >= rate:
            out[key] = _as_value(it, target)  # type: ignore[assignment]
        elif it.is_graded and abs(target - old) > 1 and rng.random() < 0.5:
            out[key] = _as_value(it, old + np.sign(target - old))  # type: ignore[assignment]
    return out
