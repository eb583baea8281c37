"""Lists in the settings editor where a value must name something the study has: a quota's
condition and screening question, an attention check's page.

The editor's schema comes from the settings model (`definition.json_schema`), which knows
the rules but not the study: typed, a condition's name or a page such as `evaluation-6` is
refused only on saving, and the message names a value the researcher never saw listed.
Here each such field becomes a list of the study's own values, plus any value it holds
already (so that showing a study never changes what it stores).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from recourse_engine import DesignError, parse_design
from studyapp.definition.json_schema import editor_schema
from studyapp.studies import updates

ALL_CONDITIONS = "All conditions"
NO_SCREENING = "No screening answer (a condition's quota)"


def _choices(pairs: Iterable[tuple[str, str]], held: Iterable[str]) -> list[dict[str, str]]:
    """(value, title) pairs, then every held value not among them (shown as it is)."""
    out = {value: title for value, title in pairs}
    for value in held:
        out.setdefault(value, f"{value} (not in this study)")
    return [{"value": value, "title": title} for value, title in out.items()]


def plan_count(config: Mapping[str, Any]) -> int:
    """The most plans any condition shows (its design, or the study's); 0 when none parses."""
    designs = [config.get("design") or ""]
    designs += [c.get("design") or config.get("design") or "" for c in config.get("conditions", [])]
    counts = []
    for design in designs:
        try:
            counts.append(parse_design(design).total)
        except DesignError:
            continue
    return max(counts, default=0)


def _quotas(schema: dict[str, Any], config: Mapping[str, Any], study_schema: Any) -> None:
    props = schema["items"]["properties"]
    held = config.get("quotas", [])
    names = [c["name"] for c in config.get("conditions", [])]
    props["condition"]["choices"] = _choices(
        [("", ALL_CONDITIONS), *((n, n) for n in names)], (q.get("condition", "") for q in held)
    )
    props["condition"]["help_text"] = (
        "One of the study's conditions (saved above; a new one is listed after saving), or all."
    )
    questions = [q for q in updates.questions_of(study_schema) if q["type"] != "integer"]
    props["screening_key"]["choices"] = _choices(
        [("", NO_SCREENING), *((q["key"], f"{q['key']}: {q.get('label', '')}") for q in questions)],
        (q.get("screening_key", "") for q in held),
    )


def _attention_checks(schema: dict[str, Any], config: Mapping[str, Any], study_schema: Any) -> None:
    page = schema["items"]["properties"]["page"]
    n = plan_count(config)
    pages = [("profile", "The profile page")]
    pages += [(f"evaluation-{i}", f"The page of plan {i}") for i in range(1, n + 1)]
    page["choices"] = _choices(
        pages, (c.get("page", "") for c in config.get("attention_checks", []))
    )
    page["help_text"] = (
        f"Where the check is shown: the profile page or one of the {n} plans' pages."
    )


#: the settings that get lists of the study's own values
_PER_STUDY: dict[str, Callable[[dict[str, Any], Mapping[str, Any], Any], None]] = {
    "quotas": _quotas,
    "attention_checks": _attention_checks,
}
PER_STUDY = tuple(_PER_STUDY)


def study_editor_schema(name: str, config: Mapping[str, Any], study_schema: Any) -> dict[str, Any]:
    """The editor's schema of setting `name` with the study's own values as lists."""
    schema = editor_schema(name)
    _PER_STUDY[name](schema, config, study_schema or {})
    return schema
