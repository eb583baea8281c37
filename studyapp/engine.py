"""The study app's bridge to `recourse_engine`: builds engine objects from a Study row.

The worker keeps one prepared `PoolIndex` per study (keyed by the pool's hash, so a new
pool is picked up) because parsing and sorting a 3,683-row pool costs far more than one
participant's search. Nothing here searches or selects; that is the engine's job.
"""

from __future__ import annotations

import hashlib
import io
import threading
from collections.abc import Mapping
from typing import Any

import pandas as pd

from recourse_engine import (
    DecisionModel,
    Design,
    FeatureSchema,
    IncomeRule,
    Pool,
    PoolIndex,
    load_schema,
    parse_design,
    pool_from_frame,
)

#: decision models a study may name; the reference study's bank rule is the only one so far
DECISION_MODELS = ("income_rule",)

_lock = threading.Lock()
_index_cache: dict[tuple[int, str, str], PoolIndex] = {}


class StudyConfigError(ValueError):
    """A study whose schema, pool, design or decision model cannot be used."""


def schema_of(schema_dict: Mapping[str, Any]) -> FeatureSchema:
    return load_schema(schema_dict)


def design_of(text: str) -> Design:
    return parse_design(text)


def model_of(name: str) -> DecisionModel:
    if name == "income_rule":
        return IncomeRule()
    raise StudyConfigError(
        f"unknown decision model {name!r}; expected one of {', '.join(DECISION_MODELS)}"
    )


def pool_csv_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def pool_of(csv_text: str, schema: FeatureSchema, source: str = "pool") -> Pool:
    """Parse and validate a pool stored as CSV text (raises the engine's PoolError)."""
    frame = pd.read_csv(io.StringIO(csv_text), dtype={"id": str})
    return pool_from_frame(frame, schema, source=source)


def pool_index_for(study: Any) -> tuple[FeatureSchema, PoolIndex]:
    """The study's schema and prepared pool index, cached per (study, pool, model)."""
    schema = schema_of(study.schema)
    key = (study.pk, study.pool_hash, study.decision_model)
    with _lock:
        index = _index_cache.get(key)
        if index is None:
            pool = pool_of(study.pool_csv, schema, source=f"study {study.slug} pool")
            index = PoolIndex(schema, pool, model_of(study.decision_model))
            for stale in [k for k in _index_cache if k[0] == study.pk]:
                del _index_cache[stale]
            _index_cache[key] = index
    return schema, index


def clear_cache() -> None:
    with _lock:
        _index_cache.clear()
