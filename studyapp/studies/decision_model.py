"""Checking an uploaded decision-model file before it is stored.

Apart from the settings model (`config`) because it loads the file with the engine (an
unpickling, superusers only in the console) and compares it with the study's schema,
which no static rule can do.
"""

from __future__ import annotations

from typing import Any

from recourse_engine import ModelError
from studyapp.generation import engine
from studyapp.models import Study
from studyapp.studies.errors import StudyError


def decision_model_check(*, study: Study, blob: bytes) -> Any:
    """Load an uploaded model file against the study's schema (hash must match)."""
    if not blob:
        raise StudyError("decision model: the uploaded file is empty")
    try:
        return engine.model_of("uploaded", blob=blob, schema=engine.schema_of(study.schema))
    except (ModelError, engine.StudyConfigError) as exc:
        raise StudyError(f"decision model: {exc}") from None
