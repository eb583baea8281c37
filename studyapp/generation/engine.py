"""The study app's bridge to `recourse_engine`: builds engine objects from a Study row.

The worker keeps one prepared `PoolIndex` per study (keyed by the pool's hash, so a new
pool is picked up) because parsing and sorting a 3,683-row pool costs far more than one
participant's search. Nothing here searches or selects; that is the engine's job.
"""

from __future__ import annotations

import hashlib
import io
import tempfile
import threading
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
    PoolIndex,
    load_model,
    load_schema,
    parse_design,
    pool_from_frame,
)
from studyapp.generation import stored_fits

#: decision models a study may name: the reference study's bank rule, or a trained model
#: uploaded by the researcher (`recourse_engine.save_model` format, kept in the study row)
DECISION_MODELS = ("income_rule", "uploaded")

_lock = threading.Lock()
_index_cache: dict[tuple[int, str, str], PoolIndex] = {}


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


def model_key(study: Any) -> str:
    """Name plus a hash of the stored model file, so a new upload is picked up."""
    blob = study.decision_model_blob
    if study.decision_model == "uploaded" and blob:
        return f"uploaded:{hashlib.sha256(bytes(blob)).hexdigest()[:16]}"
    return str(study.decision_model)


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


def pool_index_for(study: Any) -> tuple[FeatureSchema, PoolIndex]:
    """The study's schema and prepared pool index, cached per (study, pool, model, stored
    balanced-recourse fits): an index built before a fit was stored is rebuilt with it."""
    schema = schema_of(study.schema)
    key = (study.pk, study.pool_hash, model_key(study), stored_fits.fits_version(study))
    with _lock:
        index = _index_cache.get(key)
        if index is None:
            pool = pool_of(study.pool_csv, schema, source=f"study {study.slug} pool")
            stored_fits.attach_fitted(study, pool)
            index = PoolIndex(schema, pool, study_model(study, schema))
            for stale in [k for k in _index_cache if k[0] == study.pk]:
                del _index_cache[stale]
            _index_cache[key] = index
    return schema, index


def clear_cache() -> None:
    with _lock:
        _index_cache.clear()
