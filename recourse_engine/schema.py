"""Feature schemas: the profile items of a study, their options and actionability.

A schema is loaded from JSON in the form of the car-loan reference file
(`profile_items` or `items`, each with key, label, type, options or range,
constraint). Everything else in the file (screening questions, evaluation
texts, ...) is kept verbatim in `FeatureSchema.extra` for the study app.

Item values are always *codes*: options are coded 1..n in the order listed;
numeric items hold a number in [low, high].
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

ITEM_TYPES = ("categorical", "ordinal", "binary", "numeric")
CONSTRAINTS = ("any", "up", "down", "fixed")


class SchemaError(ValueError):
    """An invalid schema; the message names the item and the problem."""


@dataclass(frozen=True)
class Item:
    key: str
    label: str
    type: str
    options: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    constraint: str = "any"

    @property
    def is_numeric(self) -> bool:
        return self.type == "numeric"

    @property
    def is_graded(self) -> bool:
        """Graded items (ordinal, numeric) cost |x'-x|/M; the others cost 1 per change."""
        return self.type in ("ordinal", "numeric")

    @property
    def n_options(self) -> int:
        return len(self.options)

    @property
    def min_value(self) -> float:
        return float(self.low) if self.is_numeric else 1.0

    @property
    def max_value(self) -> float:
        return float(self.high) if self.is_numeric else float(self.n_options)

    @property
    def span(self) -> float:
        """M_i: the item's range (n_options - 1 for coded items)."""
        return self.max_value - self.min_value

    def label_of(self, code: float) -> str:
        if self.is_numeric:
            return f"{code:g}"
        return self.options[int(code) - 1]

    def valid(self, values: np.ndarray) -> np.ndarray:
        """Boolean mask of values that are legal codes (or in range) for this item."""
        v = np.asarray(values, dtype=float)
        ok = np.isfinite(v) & (v >= self.min_value) & (v <= self.max_value)
        if not self.is_numeric:
            ok &= v == np.round(v)
        return ok


@dataclass(frozen=True)
class FeatureSchema:
    name: str
    items: tuple[Item, ...]
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {it.key: i for i, it in enumerate(self.items)})

    # --- lookups -------------------------------------------------------------------------
    @property
    def keys(self) -> list[str]:
        return [it.key for it in self.items]

    @property
    def d(self) -> int:
        return len(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def index(self, key: str) -> int:
        try:
            return self._index[key]  # type: ignore[attr-defined]
        except KeyError:
            raise KeyError(f"unknown item {key!r}; schema items: {', '.join(self.keys)}") from None

    def item(self, key: str) -> Item:
        return self.items[self.index(key)]

    # --- vectors used by the distance and constraint code ---------------------------------
    @property
    def spans(self) -> np.ndarray:
        """M_i per item; 1.0 where the span is zero (a one-option item can never change)."""
        s = np.array([it.span for it in self.items], dtype=float)
        s[s == 0] = 1.0
        return s

    @property
    def graded_mask(self) -> np.ndarray:
        return np.array([it.is_graded for it in self.items], dtype=bool)

    @property
    def constraints(self) -> list[str]:
        return [it.constraint for it in self.items]

    @property
    def has_numeric(self) -> bool:
        return any(it.is_numeric for it in self.items)

    # --- identity ------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        items = []
        for it in self.items:
            d: dict[str, Any] = {"key": it.key, "label": it.label, "type": it.type}
            if it.is_numeric:
                d["min"], d["max"] = it.low, it.high
            else:
                d["options"] = list(it.options)
            d["constraint"] = it.constraint
            items.append(d)
        out = dict(self.extra)
        out["name"] = self.name
        out["profile_items"] = items
        return out

    def hash(self) -> str:
        """Hash of what decides model inputs: keys, types, options/ranges, constraints."""
        core = [
            [it.key, it.type, list(it.options), it.low, it.high, it.constraint] for it in self.items
        ]
        return hashlib.sha256(json.dumps(core, sort_keys=True).encode()).hexdigest()[:16]


def _item_from_dict(raw: Any, position: int) -> Item:
    where = f"item #{position + 1}"
    if not isinstance(raw, Mapping):
        raise SchemaError(f"{where}: must be an object, got {type(raw).__name__}")
    key = raw.get("key")
    if not isinstance(key, str) or not key.strip():
        raise SchemaError(f"{where}: missing or empty 'key'")
    if not key.isidentifier():
        raise SchemaError(f"item {key!r}: key must be a simple identifier (letters, digits, _)")
    where = f"item {key!r}"
    typ = raw.get("type")
    if typ not in ITEM_TYPES:
        raise SchemaError(f"{where}: unknown type {typ!r}; expected one of {', '.join(ITEM_TYPES)}")
    constraint = raw.get("constraint", "any")
    if constraint not in CONSTRAINTS:
        raise SchemaError(
            f"{where}: bad constraint {constraint!r}; expected one of {', '.join(CONSTRAINTS)}"
        )
    label = raw.get("label", key)
    if not isinstance(label, str):
        raise SchemaError(f"{where}: 'label' must be a string")
    if typ == "numeric":
        lo, hi = raw.get("min", raw.get("low")), raw.get("max", raw.get("high"))
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (lo, hi)):
            raise SchemaError(f"{where}: numeric items need numeric 'min' and 'max'")
        if not (np.isfinite(lo) and np.isfinite(hi)) or lo >= hi:
            raise SchemaError(f"{where}: numeric range must have min < max, got [{lo}, {hi}]")
        return Item(key, label, typ, (), float(lo), float(hi), constraint)
    options = raw.get("options")
    if not isinstance(options, list) or not options:
        raise SchemaError(f"{where}: empty or missing 'options'")
    if not all(isinstance(o, str) and o.strip() for o in options):
        raise SchemaError(f"{where}: every option must be a non-empty string")
    if len(set(options)) != len(options):
        raise SchemaError(f"{where}: duplicate option labels")
    if typ == "binary" and len(options) != 2:
        raise SchemaError(f"{where}: binary items need exactly 2 options, got {len(options)}")
    if typ in ("categorical", "ordinal") and len(options) < 2:
        raise SchemaError(f"{where}: {typ} items need at least 2 options")
    if typ == "categorical" and constraint in ("up", "down"):
        raise SchemaError(
            f"{where}: constraint {constraint!r} needs an order; categorical items allow any/fixed"
        )
    return Item(key, label, typ, tuple(options), None, None, constraint)


def schema_from_dict(data: Mapping[str, Any]) -> FeatureSchema:
    if not isinstance(data, Mapping):
        raise SchemaError("schema must be a JSON object")
    raw_items = data.get("profile_items", data.get("items"))
    if not isinstance(raw_items, list) or not raw_items:
        raise SchemaError("schema needs a non-empty 'profile_items' (or 'items') list")
    items = [_item_from_dict(r, i) for i, r in enumerate(raw_items)]
    seen: set[str] = set()
    for it in items:
        if it.key in seen:
            raise SchemaError(f"item {it.key!r}: duplicate key")
        seen.add(it.key)
    reserved = {"id", "income"}
    for it in items:
        if it.key in reserved:
            raise SchemaError(f"item {it.key!r}: key is reserved for the pool's own columns")
    name = data.get("name", "schema")
    if not isinstance(name, str):
        raise SchemaError("'name' must be a string")
    extra = {k: v for k, v in data.items() if k not in ("profile_items", "items", "name")}
    return FeatureSchema(name=name, items=tuple(items), extra=extra)


def load_schema(source: str | Path | Mapping[str, Any]) -> FeatureSchema:
    """Load a schema from a path, a JSON string or an already-parsed mapping."""
    if isinstance(source, Mapping):
        return schema_from_dict(source)
    text: str
    if isinstance(source, Path) or (
        isinstance(source, str) and not source.lstrip().startswith("{")
    ):
        path = Path(source)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise SchemaError(f"{path}: cannot read schema ({exc.strerror})") from exc
        label = str(path)
    else:
        text, label = str(source), "schema"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SchemaError(f"{label}: not valid JSON ({exc.msg} at line {exc.lineno})") from exc
    try:
        return schema_from_dict(data)
    except SchemaError as exc:
        raise SchemaError(f"{label}: {exc}") from None


def carloan_schema() -> FeatureSchema:
    """The built-in reference car-loan schema (Tominaga et al.)."""
    text = (
        resources.files("recourse_engine").joinpath("data/carloan_schema.json").read_text("utf-8")
    )
    return load_schema(json.loads(text))
