"""Refusals of study writes, shared by every service module so that the console, the API and
the commands can catch one family of errors and show its message as is.

`ConfigError` keeps each problem as (path, message) so that a form can put it under the
field the path starts with and the API under the JSON key, both with the same words;
`config_problems` turns pydantic's errors into such pairs in plain words.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, get_args, get_origin

from pydantic import BaseModel, ValidationError

_HEAD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*")


class StudyError(ValueError):
    """A study definition or change that cannot be applied; the message says why."""


class StudyFrozen(StudyError):
    """A change to a draft-only part of a live or closed study."""


class ConfigError(StudyError):
    """Settings that break the study configuration model; one (path, problem) per fault,
    e.g. ("design[1]", "unknown strategy 'proxmate'")."""

    def __init__(self, problems: Sequence[tuple[str, str]]) -> None:
        self.problems = [(str(path), str(message)) for path, message in problems]
        super().__init__("; ".join(self.messages))

    @property
    def messages(self) -> list[str]:
        return [f"{path}: {message}" if path else message for path, message in self.problems]

    def by_field(self) -> dict[str, list[str]]:
        """Messages grouped under the top-level setting their path starts with."""
        out: dict[str, list[str]] = {}
        for (path, _), text in zip(self.problems, self.messages, strict=True):
            match = _HEAD.match(path)
            out.setdefault(match.group(0) if match else "non_field_errors", []).append(text)
        return out


# --- pydantic's errors as (path, problem) -------------------------------------------------------
_TYPE_WORDS = {
    "dict_type": "expected an object",
    "model_type": "expected an object",
    "model_attributes_type": "expected an object",
    "list_type": "expected a list",
    "string_type": "expected a text",
    "int_type": "expected a whole number",
    "int_parsing": "expected a whole number",
    "int_from_float": "expected a whole number",
    "bool_type": "expected true or false",
    "missing": "required",
}


def _bare(kind: Any) -> Any:
    while get_origin(kind) is Annotated:
        kind = get_args(kind)[0]
    return kind


def _model_at(root: type[BaseModel], loc: Sequence[Any]) -> type[BaseModel] | None:
    """The model whose fields `loc` points into (None when it points into no model)."""
    kind: Any = root
    for part in loc:
        kind = _bare(kind)
        if isinstance(kind, type) and issubclass(kind, BaseModel) and isinstance(part, str):
            field = kind.model_fields.get(part)
            if field is None:
                return None
            kind = field.annotation
        elif get_origin(kind) in (list, dict):
            kind = get_args(kind)[-1]
        else:
            return None
    kind = _bare(kind)
    return kind if isinstance(kind, type) and issubclass(kind, BaseModel) else None


def config_path(loc: Sequence[Any]) -> str:
    """("attention_checks", 0, "answer") -> "attention_checks[0].answer"."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _message(err: Mapping[str, Any], root: type[BaseModel], hints: Mapping[str, str]) -> str:
    kind, ctx = err["type"], err.get("ctx") or {}
    if "problem" in ctx:
        return str(ctx["problem"])
    if kind == "extra_forbidden":
        model = _model_at(root, err["loc"][:-1])
        known = f"; expected one of: {', '.join(model.model_fields)}" if model else ""
        return f"unknown field{known}"
    if kind == "literal_error":
        return f"{err['input']!r} is not one of {ctx.get('expected')}"
    if kind == "string_pattern_mismatch":
        hint = hints.get(ctx.get("pattern", ""), f"must match {ctx.get('pattern')}")
        return f"{err['input']!r}: {hint}"
    if kind in ("string_too_short", "too_short") and ctx.get("min_length") == 1:
        return "required"
    return _TYPE_WORDS.get(kind, str(err["msg"]))


def config_problems(
    exc: ValidationError, root: type[BaseModel], hints: Mapping[str, str] | None = None
) -> list[tuple[str, str]]:
    """(path, problem) for every error pydantic found validating `root`.

    A validator may extend the path with ``at`` in its error's context: "[1]" or ".key"
    below the value it checked, or a whole path of its own ("quotas[0].condition").
    `hints` maps a regex pattern to what it asks for, for pattern mismatches.
    """
    problems = []
    for err in exc.errors(include_url=False):
        at = str((err.get("ctx") or {}).get("at", ""))
        path = config_path(err["loc"])
        path = at if at and not at.startswith((".", "[")) else path + at
        problems.append((path, _message(err, root, hints or {})))
    return problems
