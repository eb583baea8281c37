"""Screening questions of a study: eligibility and the group attributes they yield.

The questions live in the schema's ``screening`` list (see the car-loan schema):
``integer`` (min/max), ``choice`` (options coded 1..n, optional ``eligible`` codes) and
``multi`` (several codes, optional ``eligible_only``: every selected code must be in it).

Income is asked as a band (e.g. ``"4M-5M"``). The engine's income rule needs a number, so
a band becomes JPY by this rule: the midpoint of a closed band (``4M-5M`` -> 4,500,000);
an open lower band ``-2M`` is read as 0..2M (-> 1,000,000); an open upper band ``10M-``
takes its lower edge (-> 10,000,000). The car-loan study screens out the upper band.

An income question may offer a "prefer not to say" option, named by its code in
``undisclosed`` (the pool-collection survey's 21st answer): that answer keeps its label as
the band and gives no JPY value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from studyapp.definition.questions import Question, asked

_BAND = re.compile(
    r"^\s*(?P<lo>\d+(?:\.\d+)?)?\s*(?P<lo_unit>[MK])?\s*-\s*(?P<hi>\d+(?:\.\d+)?)?\s*(?P<hi_unit>[MK])?\s*$"
)
_UNIT = {"M": 1_000_000.0, "K": 1_000.0, None: 1_000_000.0}


#: a screening question's type in the schema -> the question type that asks it
SCREENING_TYPES = {"integer": "integer", "choice": "single", "multi": "multi"}


class ScreeningError(ValueError):
    """A screening definition the app cannot use (bad schema, not a participant's answer)."""


def income_band_to_jpy(label: str) -> float:
    """JPY for an income band label, by the rule in the module docstring."""
    m = _BAND.match(label)
    if m is None or (m["lo"] is None and m["hi"] is None):
        raise ScreeningError(f"income band {label!r} is not of the form '2M-3M', '-2M' or '10M-'")
    lo_unit = m["lo_unit"] or m["hi_unit"]
    hi_unit = m["hi_unit"] or m["lo_unit"]
    lo = float(m["lo"]) * _UNIT[lo_unit] if m["lo"] is not None else 0.0
    if m["hi"] is None:
        return lo
    hi = float(m["hi"]) * _UNIT[hi_unit]
    if hi <= lo:
        raise ScreeningError(f"income band {label!r}: upper edge must exceed the lower edge")
    return (lo + hi) / 2.0


def questions(schema: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The screening questions of a schema dict, checked for what the app relies on."""
    raw = schema.get("screening", [])
    if not isinstance(raw, list):
        raise ScreeningError("schema 'screening' must be a list of questions")
    out = []
    for i, q in enumerate(raw, start=1):
        if not isinstance(q, Mapping) or not isinstance(q.get("key"), str):
            raise ScreeningError(f"screening question #{i}: needs a 'key'")
        if q.get("type") not in SCREENING_TYPES:
            raise ScreeningError(
                f"screening question {q['key']!r}: type must be integer, choice or multi"
            )
        if q["type"] != "integer" and not q.get("options"):
            raise ScreeningError(f"screening question {q['key']!r}: needs 'options'")
        out.append(dict(q))
    return out


def as_question(q: Mapping[str, Any]) -> Question:
    """A screening question (as `questions` returns it) as the question type that asks it."""
    return asked(
        key=q["key"],
        type=SCREENING_TYPES[q["type"]],
        label=str(q.get("label", q["key"])),
        options=q.get("options", []),
        min=q.get("min"),
        max=q.get("max"),
    )


def is_eligible(qs: Sequence[Mapping[str, Any]], answers: Mapping[str, Any]) -> bool:
    """True when every answer meets its question's eligibility rule (answers are codes)."""
    for q in qs:
        value = answers.get(q["key"])
        if q["type"] == "choice" and "eligible" in q and value not in q["eligible"]:
            return False
        if q["type"] == "multi" and "eligible_only" in q:
            allowed = set(q["eligible_only"])
            if not value or not set(value) <= allowed:
                return False
    return True


def group_attributes(qs: Sequence[Mapping[str, Any]], answers: Mapping[str, Any]) -> dict[str, Any]:
    """gender (label), age (int), income band (label) and income in JPY from the answers."""
    by_key = {q["key"]: q for q in qs}
    out: dict[str, Any] = {"gender": "", "age": None, "income_band": "", "income_jpy": None}
    if "age" in answers:
        out["age"] = int(answers["age"])
    if "gender" in answers and "gender" in by_key:
        out["gender"] = by_key["gender"]["options"][int(answers["gender"]) - 1]
    if "income" in answers and "income" in by_key:
        q = by_key["income"]
        band = q["options"][int(answers["income"]) - 1]
        out["income_band"] = band
        undisclosed = int(answers["income"]) == q.get("undisclosed")
        out["income_jpy"] = None if undisclosed else income_band_to_jpy(band)
    return out


def pool_income_problem(qs: Sequence[Mapping[str, Any]]) -> str | None:
    """Why these screening questions cannot collect a pool (None: they can): a pool needs an
    income item whose band options give a JPY value, and one "prefer not to say" option
    named by its code in ``undisclosed``."""
    q = next((q for q in qs if q.get("key") == "income"), None)
    if q is None or q.get("type") != "choice":
        return (
            "a pool-collection study needs an income item: a screening question 'income' of "
            "type choice with income bands and a 'prefer not to say' answer (its code in "
            "'undisclosed'); this schema has none"
        )
    options = q.get("options") or []
    undisclosed = q.get("undisclosed")
    if not isinstance(undisclosed, int) or not 1 <= undisclosed <= len(options):
        return (
            "the income item needs a 'prefer not to say' answer: set 'undisclosed' to its "
            f"code (1..{len(options)})"
        )
    for code, label in enumerate(options, start=1):
        if code == undisclosed:
            continue
        try:
            income_band_to_jpy(label)
        except ScreeningError as exc:
            return f"the income item's answer {code}: {exc}"
    return None
