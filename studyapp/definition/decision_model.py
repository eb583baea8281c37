"""Checking an uploaded decision-model file before it is stored.

Apart from the settings model (`config`) because it loads the file with the engine (an
unpickling, superusers only in the console) and compares it with the study's schema,
which no static rule can do.
"""

from __future__ import annotations

from typing import Any

from recourse_engine import ModelError
from studyapp.definition import engine_objects
from studyapp.definition.errors import StudyError
from studyapp.models import Study


def decision_model_check(*, study: Study, blob: bytes) -> Any:
    """Load an uploaded model file against the study's schema (hash must match)."""
    if not blob:
        raise StudyError("decision model: the uploaded file is empty")
    try:
        return engine_objects.model_of(
            "uploaded", blob=blob, schema=engine_objects.schema_of(study.schema)
        )
    except (ModelError, engine_objects.StudyConfigError) as exc:
        raise StudyError(f"decision model: {exc}") from None
