"""The rules on a study's cells that need its screening questions: which answers make a
participant eligible, and which condition and screening answer a quota counts.

Apart from the settings model (`study_config`) because they read the schema's screening
questions from the validation context rather than the settings themselves; without the
questions (a settings read with no study) only what needs none is checked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic_core import PydanticCustomError

Questions = Mapping[str, Mapping[str, Any]]


def _problem(kind: str, message: str, at: str = "") -> PydanticCustomError:
    return PydanticCustomError(kind, "{problem}", {"problem": message, "at": at})


def eligibility_checked(
    value: Mapping[str, list[int]], questions: Questions | None
) -> dict[str, list[int]]:
    """Screening key -> eligible codes, each key a choice question and each code one of its
    options (sorted, each once; a key with no codes left out)."""
    out = {}
    for key, codes in value.items():
        if questions is not None:
            q = questions.get(key)
            if q is None or q.get("type") not in ("choice", "multi"):
                choices = [k for k, q in questions.items() if q.get("type") != "integer"]
                raise _problem(
                    "eligibility",
                    f"not a choice question of the schema (one of: {', '.join(choices)})",
                    f".{key}",
                )
            n = len(q.get("options", []))
            for i, code in enumerate(codes):
                if not 1 <= code <= n:
                    raise _problem(
                        "eligibility", f"{code} is not an option (1..{n})", f".{key}[{i}]"
                    )
        if codes:
            out[key] = sorted(set(codes))
    return out


def quota_cells_check(
    quotas: Sequence[Any], conditions: Sequence[str], questions: Questions | None
) -> None:
    """Every quota names a defined condition (or none) and a screening question with one of
    its options, by code or label."""
    for i, quota in enumerate(quotas):
        if quota.condition and quota.condition not in conditions:
            known = ", ".join(conditions) or "none defined"
            raise _problem(
                "quota",
                f"no condition named {quota.condition!r} (conditions: {known})",
                f"quotas[{i}].condition",
            )
        if not quota.screening_key or questions is None:
            continue
        q = questions.get(quota.screening_key)
        if q is None:
            raise _problem(
                "quota",
                f"{quota.screening_key!r} is not a screening question ({', '.join(questions)})",
                f"quotas[{i}].screening_key",
            )
        options = [str(o) for o in q.get("options", [])]
        codes = [str(c) for c in range(1, len(options) + 1)]
        if options and quota.screening_value not in codes + options:
            raise _problem(
                "quota",
                f"{quota.screening_value!r} for {quota.screening_key!r}: an option code "
                f"1..{len(options)} or its label",
                f"quotas[{i}].screening_value",
            )
