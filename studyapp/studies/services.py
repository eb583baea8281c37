"""Study writes: creating a study, changing its design, moving it between states.

HackSoft style: keyword-only, typed, named `study_<action>`; the admin console, the REST
API and the commands call these, never the ORM directly.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Mapping
from typing import Any

import pandas as pd

from recourse_engine import (
    DesignError,
    FeatureSchema,
    PoolError,
    SchemaError,
)
from studyapp.generation import engine
from studyapp.models import (
    Participant,
    Study,
    default_outcome_codes,
)
from studyapp.participation import screening
from studyapp.participation.withdrawal import participant_delete as participant_delete

log = logging.getLogger(__name__)

S = Participant.State
G = Participant.Generation


class StudyError(ValueError):
    """A study definition or change that cannot be applied; the message says why."""



def _check_study_parts(
    *, schema: FeatureSchema, pool_csv: str, design: str, decision_model: str
) -> int:
    try:
        engine.design_of(design)
    except DesignError as exc:
        raise StudyError(f"design: {exc}") from None
    try:
        engine.model_of(decision_model)
    except engine.StudyConfigError as exc:
        raise StudyError(str(exc)) from None
    try:
        pool = engine.pool_of(pool_csv, schema)
    except (PoolError, ValueError) as exc:
        raise StudyError(f"pool: {exc}") from None
    try:
        screening.questions(schema.to_dict())
    except screening.ScreeningError as exc:
        raise StudyError(str(exc)) from None
    return len(pool)


def study_create(
    *,
    slug: str,
    title: str,
    schema: FeatureSchema | Mapping[str, Any],
    pool: pd.DataFrame | str,
    design: str,
    texts: Mapping[str, Any],
    consent_version: str,
    decision_model: str = "income_rule",
    seed: int = 0,
    language: str = "en",
    outcome_codes: Mapping[str, Mapping[str, str]] | None = None,
) -> Study:
    """Create a draft study; the pool is a table (or CSV text) validated by the engine.

    `texts` maps a language to its page texts; a flat {key: text} is taken as English.
    """
    if texts and not all(isinstance(v, Mapping) for v in texts.values()):
        texts = {"en": dict(texts)}
    codes = default_outcome_codes()
    for outcome, entry in (outcome_codes or {}).items():
        if outcome not in codes:
            raise StudyError(f"outcome codes: unknown outcome {outcome!r}")
        codes[outcome].update(entry)
    if not isinstance(schema, FeatureSchema):
        try:
            schema = engine.schema_of(schema)
        except SchemaError as exc:
            raise StudyError(f"schema: {exc}") from None
    if isinstance(pool, pd.DataFrame):
        buf = io.StringIO()
        pool.to_csv(buf, index=False)
        pool_csv = buf.getvalue()
    else:
        pool_csv = pool
    rows = _check_study_parts(
        schema=schema, pool_csv=pool_csv, design=design, decision_model=decision_model
    )
    return Study.objects.create(
        slug=slug,
        title=title,
        schema=schema.to_dict(),
        schema_hash=schema.hash(),
        texts={lang: dict(t) for lang, t in texts.items()},
        language=language,
        outcome_codes=codes,
        consent_version=consent_version,
        design=str(engine.design_of(design)),
        decision_model=decision_model,
        pool_csv=pool_csv,
        pool_hash=engine.pool_csv_hash(pool_csv),
        pool_rows=rows,
        seed=seed,
    )


def study_update_design(*, study: Study, design: str) -> Study:
    """Change a draft study's design; a live or closed study's design is frozen."""
    if study.state != Study.State.DRAFT:
        raise StudyError(
            f"study {study.slug} is {study.state}: its design is frozen once it goes live"
        )
    try:
        study.design = str(engine.design_of(design))
    except DesignError as exc:
        raise StudyError(f"design: {exc}") from None
    study.save(update_fields=["design", "updated_at"])
    return study


_STUDY_MOVES = {
    Study.State.DRAFT: {Study.State.LIVE},
    Study.State.LIVE: {Study.State.CLOSED},
    Study.State.CLOSED: {Study.State.LIVE},
}


def study_set_state(*, study: Study, state: str) -> Study:
    if state == study.state:
        return study
    if state not in _STUDY_MOVES.get(study.state, set()):
        raise StudyError(f"study {study.slug}: cannot go from {study.state} to {state}")
    study.state = state
    study.save(update_fields=["state", "updated_at"])
    if state == Study.State.LIVE:
        # balanced strategies (ebr/ibr) need models fitted on the pool: a Celery task
        from studyapp.generation.method_fitting import fits_queue

        fits_queue(study=study)
    return study


