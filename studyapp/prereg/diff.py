"""A readable difference between two study file documents (two versions, a registration and
the study as it is): one line per setting that changed, by its path in the document."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

#: paths whose values are long texts or tables: their change is named, not printed whole
_SHORTEN_AT = 160


@dataclass(frozen=True)
class Change:
    path: str
    before: Any
    after: Any

    @property
    def kind(self) -> str:
        if self.before is _MISSING:
            return "added"
        if self.after is _MISSING:
            return "removed"
        return "changed"

    def line(self) -> str:
        if self.kind == "added":
            return f"{self.path}: added {_show(self.after)}"
        if self.kind == "removed":
            return f"{self.path}: removed (was {_show(self.before)})"
        return f"{self.path}: {_show(self.before)} -> {_show(self.after)}"


class _Missing:
    def __repr__(self) -> str:
        return "(none)"


_MISSING: Any = _Missing()


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= _SHORTEN_AT else text[: _SHORTEN_AT - 3] + "..."


def _walk(a: Any, b: Any, path: str, out: list[Change]) -> None:
    if a == b:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            sub = f"{path}.{key}" if path else str(key)
            _walk(a.get(key, _MISSING), b.get(key, _MISSING), sub, out)
        return
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _walk(x, y, f"{path}[{i}]", out)
        return
    out.append(Change(path, a, b))


def document_diff(before: dict[str, Any], after: dict[str, Any]) -> list[Change]:
    """Every leaf that differs (lists of another length count as one change)."""
    out: list[Change] = []
    _walk(before, after, "", out)
    return out


def changed_settings(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The top-level parts that changed (settings by name; schema, pool, decision_model)."""
    names = []
    for change in document_diff(before, after):
        head = change.path.split(".")[0].split("[")[0]
        if head == "settings":
            rest = change.path.split(".", 1)[1] if "." in change.path else ""
            head = rest.split(".")[0].split("[")[0] or head
        if head not in names:
            names.append(head)
    return names
