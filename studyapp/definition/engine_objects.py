"""The engine objects of a study: its feature schema, design, decision model and pool, built
from a Study row's settings with `recourse_engine`.

Every studyapp package reads a study's engine objects through here, so that what a setting
means to the engine is said once. Nothing here searches, selects or caches; the worker's
prepared pool index and loaded methods are `generation.worker_cache`.
"""

from __future__ import annotations

import hashlib
import io
import tempfile
from collections.abc import Mapping
from typing import Any

import pandas as pd

from recourse_engine import (
    DecisionModel,
    Design,
    FeatureSchema,
    IncomeRule,
    ModelError,
    Pool,
    load_model,
    load_schema,
    parse_design,
    pool_from_frame,
)

#: decision models a study may name: the reference study's bank rule, or a trained model
#: uploaded by the researcher (`recourse_engine.save_model` format, kept in the study row)
DECISION_MODELS = ("income_rule", "uploaded")


class StudyConfigError(ValueError):
    """A study whose schema, pool, design or decision model cannot be used."""


def schema_of(schema_dict: Mapping[str, Any]) -> FeatureSchema:
    return load_schema(schema_dict)


def design_of(text: str) -> Design:
    return parse_design(text)


def model_of(
    name: str, blob: bytes | None = None, schema: FeatureSchema | None = None
) -> DecisionModel:
    """A decision model by name; "uploaded" loads `blob` (a saved model file) and refuses
    one trained on another schema than `schema`."""
    if name == "income_rule":
        return IncomeRule()
    if name == "uploaded":
        if not blob:
            raise StudyConfigError("decision model 'uploaded': no model file stored")
        if schema is None:
            raise StudyConfigError("decision model 'uploaded': the study's schema is needed")
        return _load_blob(bytes(blob), schema)
    raise StudyConfigError(
        f"unknown decision model {name!r}; expected one of {', '.join(DECISION_MODELS)}"
    )


def _load_blob(blob: bytes, schema: FeatureSchema) -> DecisionModel:
    # load_model reads a path (joblib or torch); the upload lives in the database
    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/model"
        with open(path, "wb") as fh:
            fh.write(blob)
        try:
            model = load_model(path, schema)
        except ModelError as exc:
            raise StudyConfigError(str(exc).replace(path, "uploaded model")) from None
    if model.schema_hash is not None and model.schema_hash != schema.hash():
        raise StudyConfigError(
            f"uploaded model was trained on schema {model.schema_hash}, not this study's"
        )
    return model


def study_model(study: Any, schema: FeatureSchema | None = None) -> DecisionModel:
    """The study's decision model (the uploaded one loaded from its row)."""
    if schema is None:
        schema = schema_of(study.schema)
    return model_of(study.decision_model, blob=study.decision_model_blob, schema=schema)


def pool_csv_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def pool_of(csv_text: str, schema: FeatureSchema, source: str = "pool") -> Pool:
    """Parse and validate a pool stored as CSV text (raises the engine's PoolError)."""
    frame = pd.read_csv(io.StringIO(csv_text), dtype={"id": str})
    return pool_from_frame(frame, schema, source=source)
