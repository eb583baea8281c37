"""The card of a study's stored decision model: what the study page shows of it.

Written whenever a model file is stored (trained in the console or uploaded), so that the page
reads a small JSON object instead of unpickling the model and loading the pool on every view:
kind, features, label rule, when it was trained or uploaded, the file's sha256, the pool it
was measured on and its approval rate there, and a linear model's coefficients.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

from recourse_engine.model_training import LabelRule, model_card
from studyapp.definition import engine_objects
from studyapp.models import Study

#: how a stored model came to be
SOURCES = ("trained", "uploaded")


def decision_model_card(
    *,
    study: Study,
    blob: bytes,
    source: str,
    at: datetime,
    label_rule: LabelRule | None = None,
) -> dict[str, Any]:
    """The card of `blob` (a saved model file) on the study's schema and current pool."""
    if source not in SOURCES:
        raise ValueError(f"source must be one of {SOURCES}, got {source!r}")
    schema = engine_objects.schema_of(study.schema)
    pool = engine_objects.pool_of(study.pool_csv, schema)
    model = engine_objects.model_of("uploaded", blob=blob, schema=schema)
    return {
        **model_card(model, schema, pool),
        "source": source,
        "at": at.isoformat(),
        "label_rule": label_rule.to_dict() if label_rule else None,
        "label_rule_text": label_rule.describe() if label_rule else "not recorded (uploaded file)",
        "sha256": hashlib.sha256(bytes(blob)).hexdigest(),
        "pool_hash": study.pool_hash,
    }


def card_on_pool(*, study: Study, card: dict[str, Any], blob: bytes) -> dict[str, Any]:
    """The card measured again on the study's current pool (after the pool is replaced);
    where and how the model was made is kept."""
    schema = engine_objects.schema_of(study.schema)
    pool = engine_objects.pool_of(study.pool_csv, schema)
    model = engine_objects.model_of("uploaded", blob=blob, schema=schema)
    return {**card, **model_card(model, schema, pool), "pool_hash": study.pool_hash}
