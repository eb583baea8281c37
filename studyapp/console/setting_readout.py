"""A structured setting shown read-only as a form reads: each value under its title from
the setting's JSON Schema (the editor's own labels), never as a JSON dump.

The admin shows a read-only model field with `json.dumps` and the model field's help text;
a live study's texts, questions, conditions and attention checks, and every structured
setting of a researcher who may only view the study, are shown here instead
(`StudyAdmin.get_fieldsets` swaps each for its `<name>_readout`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from django.contrib import admin
from django.template.defaultfilters import linebreaksbr
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from studyapp.definition.json_schema import editor_schema
from studyapp.models import Study
from studyapp.studies import updates

#: the structured settings that have a read-only form
READOUTS = (
    "texts", "outcome_codes", "attention_checks", "conditions", "quotas", "method_params",
    "questions", "random_item_order", "page_timeouts", "design_check_thresholds", "retention",
)  # fmt: skip
SUFFIX = "_readout"
EMPTY = "–"


def _scalar(value: Any) -> SafeString:
    if value is None or value == "":
        return format_html("{}", EMPTY)
    if isinstance(value, bool):
        return format_html("{}", "yes" if value else "no")
    if isinstance(value, str):
        return linebreaksbr(value, autoescape=True)
    if isinstance(value, float):
        return format_html("{}", f"{value:g}")
    return format_html("{}", value)


def _branch(schema: Mapping[str, Any], value: Any) -> Mapping[str, Any]:
    """The `oneOf` form a value was made with (a question's type), else the schema itself."""
    for option in schema.get("oneOf", []):
        const = option.get("properties", {}).get("type", {}).get("const")
        if isinstance(value, Mapping) and const == value.get("type"):
            return option
    return schema


def _title(schema: Mapping[str, Any], key: str) -> str:
    return str(schema.get("title") or key.replace("_", " ").capitalize())


def render(schema: Mapping[str, Any], value: Any) -> SafeString:
    """`value` under the titles of `schema`: objects as labelled rows, lists numbered. An
    object shows the properties its schema (or its `oneOf` form) names; a mapping with open
    keys (a method's settings) shows every key."""
    schema = _branch(schema, value)
    if isinstance(value, Mapping):
        if not value:
            return format_html("{}", "none")
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        keys = [k for k in props if k in value]
        if isinstance(extra, Mapping) or not props:
            keys += [k for k in value if k not in props]
        rows = []
        for key in keys:
            sub = props.get(key) or (extra if isinstance(extra, Mapping) else {})
            shown = (
                format_html("{}", schema["title"]) if "const" in sub else render(sub, value[key])
            )
            rows.append((_title(props.get(key, {}), key), shown))
        return format_html(
            '<dl class="setting-readout">{}</dl>',
            format_html_join("", "<dt>{}</dt><dd>{}</dd>", rows),
        )
    if isinstance(value, list):
        if not value:
            return format_html("{}", "none")
        items = schema.get("items", {})
        if all(not isinstance(v, Mapping | list) for v in value):
            return format_html("{}", ", ".join(str(v) for v in value))
        return format_html(
            '<ol class="setting-readout">{}</ol>',
            format_html_join("", "<li>{}</li>", ((render(items, v),) for v in value)),
        )
    return _scalar(value)


def readout(name: str, study: Study) -> SafeString:
    """The study's setting `name` as a read-only form."""
    return render(editor_schema(name), updates.study_config(study).get(name))


def _method(name: str) -> Callable[[Any, Study], SafeString]:
    title = str(editor_schema(name).get("title") or name)

    @admin.display(description=title)
    def show(model_admin: Any, study: Study) -> SafeString:
        return readout(name, study) if study.pk else mark_safe(EMPTY)

    return show


def admin_methods() -> dict[str, Callable[[Any, Study], SafeString]]:
    """`<name>_readout` display methods for the study admin, one per structured setting."""
    return {f"{name}{SUFFIX}": _method(name) for name in READOUTS}


def swap(fieldsets: list[Any], names: set[str]) -> list[Any]:
    """The fieldsets with each setting in `names` replaced by its read-only form."""
    out = []
    for title, options in fieldsets:
        fields = [f"{f}{SUFFIX}" if f in names else f for f in options["fields"]]
        out.append((title, {**options, "fields": fields}))
    return out
