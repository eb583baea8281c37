"""The JSON Schema of the study configuration, in the two shapes its readers need: plain JSON
Schema with references resolved (the OpenAPI document's response fields) and the dialect of
the console's structured editor (django-jsonform).

Both come from `StudyConfig.model_json_schema()`, so the editor offers exactly the fields
the model accepts; nothing about a setting is written twice.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from studyapp.definition.question_types import QUESTION_TYPES, researcher_types
from studyapp.definition.study_config import StudyConfig

#: strings at least this long get a multi-line text box in the editor
_TEXTAREA_FROM = 1000
#: keywords the editor understands (others, such as `pattern`, stay server-side)
_EDITOR_KEYWORDS = {
    "type",
    "title",
    "properties",
    "items",
    "required",
    "enum",
    "default",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "additionalProperties",
}


@cache
def _config_schema() -> dict[str, Any]:
    return StudyConfig.model_json_schema()


def _resolve(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        if "$ref" in node:
            target = defs[node["$ref"].rsplit("/", 1)[-1]]
            merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
            return _resolve(merged, defs)
        return {k: _resolve(v, defs) for k, v in node.items()}
    if isinstance(node, list):
        return [_resolve(v, defs) for v in node]
    return node


def setting_json_schema(name: str) -> dict[str, Any]:
    """JSON Schema of one setting (e.g. "texts"), with every reference resolved inline."""
    schema = _config_schema()
    out = _resolve(copy.deepcopy(schema["properties"][name]), schema.get("$defs", {}))
    out["title"] = name.replace("_", " ").capitalize()
    return out


def _editor(node: dict[str, Any]) -> dict[str, Any]:
    branches = [b for b in node.get("anyOf", []) if b.get("type") != "null"]
    if len(branches) == 1:  # an optional value (x | None): the editor shows x, blank allowed
        node = {**branches[0], **{k: v for k, v in node.items() if k != "anyOf"}}
    elif branches and all(b.get("type") in ("integer", "number", "string") for b in branches):
        # a number or a text (a logic condition's value): typed as text, read by the model
        rest = {k: v for k, v in node.items() if k != "anyOf" and (k, v) != ("default", None)}
        node = {"type": "string", **rest}
    out = {k: v for k, v in node.items() if k in _EDITOR_KEYWORDS}
    if "description" in node:
        out["help_text"] = node["description"]
    if "properties" in node:
        out["type"] = "object"
        out["properties"] = {k: _editor(v) for k, v in node["properties"].items()}
        out["additionalProperties"] = False
    if isinstance(node.get("items"), dict):
        out["items"] = _editor(node["items"])
    if isinstance(node.get("additionalProperties"), dict):
        out["additionalProperties"] = _editor(node["additionalProperties"])
    if out.get("type") == "string" and node.get("maxLength", 0) >= _TEXTAREA_FROM:
        out["widget"] = "textarea"
    return out


def _one_form_per_type(item: dict[str, Any]) -> dict[str, Any]:
    """A researcher-defined item in the editor: its type is chosen first, one form per entry
    of `question_types.QUESTION_TYPES`, and each form holds only the settings its type reads
    (`QuestionType.settings`), so a Likert item shows no slider step."""
    props = item["properties"]
    per_type = {s for name in researcher_types() for s in QUESTION_TYPES[name].settings}
    branches = []
    for name in researcher_types():
        kind = QUESTION_TYPES[name]
        fields: dict[str, Any] = {}
        for key, value in props.items():
            if key == "type":
                fields[key] = {"type": "string", "const": name, "title": "Type"}
            elif key not in per_type or key in kind.settings:
                fields[key] = value
        branches.append(
            {
                "type": "object",
                "title": kind.title or name,
                "properties": fields,
                "additionalProperties": False,
                "required": [k for k in item.get("required", []) if k in fields],
            }
        )
    return {"title": "Question type", "oneOf": branches}


#: settings whose list items the editor shows as one form per kind
_FORM_PER_KIND = {"questions": _one_form_per_type}


def editor_schema(name: str) -> dict[str, Any]:
    """One setting's schema in django-jsonform's dialect (for the console's editor)."""
    out = _editor(setting_json_schema(name))
    if name in _FORM_PER_KIND:
        out["items"] = _FORM_PER_KIND[name](out["items"])
    return out
