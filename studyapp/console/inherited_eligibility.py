"""Which of a study's eligibility rules it inherited from the reference car-loan study.

A study built on the built-in car-loan schema starts with that study's screening rules
(full-time workers, incomes up to 10M, people planning to buy a car, no loans but…). A
newcomer who sees the boxes already ticked takes them for their own choice, or does not
notice them at all; the console labels each inherited rule as the reference study's
default and says so above the rules, so that keeping one is a decision.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from studyapp.studies import carloan, updates

INHERITED_HELP = (
    "Inherited default of the reference car-loan study: only the ticked answers are eligible; "
    "untick them all to let everyone in."
)
OWN_CHOICE_HELP = "Eligible answers (none ticked: everyone)"
OWN_MULTI_HELP = "Eligible only when every selected answer is ticked here"


@cache
def _reference() -> tuple[dict[str, list[int]], dict[str, tuple[Any, ...]]]:
    schema = carloan.carloan_schema_dict()
    options = {q["key"]: tuple(q.get("options", ())) for q in updates.questions_of(schema)}
    return updates.eligibility_of(schema), options


def inherited_rules(schema: Mapping[str, Any]) -> dict[str, list[int]]:
    """Screening key -> eligible codes, for each rule of `schema` that is the reference
    study's (the same question with the same options and the same eligible codes)."""
    rules, options = _reference()
    own = updates.eligibility_of(schema)
    return {
        q["key"]: own[q["key"]]
        for q in updates.questions_of(schema)
        if q["key"] in own
        and own[q["key"]] == rules.get(q["key"])
        and tuple(q.get("options", ())) == options.get(q["key"])
    }


def help_text(question: Mapping[str, Any], inherited: Mapping[str, list[int]]) -> str:
    """What the ticks of one screening question mean, and whether they are inherited."""
    if question["key"] in inherited:
        return INHERITED_HELP
    return OWN_CHOICE_HELP if question["type"] == "choice" else OWN_MULTI_HELP


def section_note(inherited: Mapping[str, list[int]], *, draft: bool = True) -> str:
    """The eligibility section's description ("" when no rule is inherited)."""
    if not inherited:
        return ""
    n = len(inherited)
    rules = "rule" if n == 1 else "rules"
    note = (
        f"{n} screening {rules} ({', '.join(inherited)}) came with the built-in car-loan "
        "schema as the reference study's defaults: participants with other answers are "
        "screened out."
    )
    return f"{note} Keep them only if your study needs them." if draft else note
