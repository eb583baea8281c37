"""Creating a study and moving it between states.

HackSoft style: keyword-only, typed, named `study_<action>`; the admin console, the REST
API and the commands call these, never the ORM directly. Every setting of a new study is
checked by the one configuration model (`config`), the schema and the pool by the engine,
so a study made from the console, the API or a command obeys the same rules. The car-loan
reference study is made by `carloan.carloan_study_create`, on top of these.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
from django.db import transaction
from django.utils import timezone

from recourse_engine import FeatureSchema, PoolError, SchemaError, synth_pool
from studyapp.definition import engine_objects, screening, study_config
from studyapp.definition.errors import StudyError
from studyapp.models import Study, default_outcome_codes
from studyapp.studies.pool import PoolRejected, pool_preview
from studyapp.studies.updates import config_merge, config_write, eligibility_of, questions_of

_SLUG = re.compile(r"^[-a-zA-Z0-9_]{1,50}$")
#: settings a new study takes from the schema or the rows it is made of, unless given
_EXTRA_SETTINGS = ("eligibility", "conditions", "quotas")


def slug_check(slug: str) -> str:
    """A free, well-formed slug (it appears in participant links)."""
    slug = (slug or "").strip()
    if not _SLUG.match(slug):
        raise StudyError(
            f"slug {slug!r}: use 1-50 letters, digits, '-' or '_' (it appears in links)"
        )
    if Study.objects.filter(slug=slug).exists():
        raise StudyError(f"slug {slug!r}: a study with this slug exists already")
    return slug


def schema_of(schema: Mapping[str, Any] | FeatureSchema) -> FeatureSchema:
    """The engine's reading of a feature schema, with screening questions the app can use."""
    if not isinstance(schema, FeatureSchema):
        try:
            schema = engine_objects.schema_of(schema)
        except SchemaError as exc:
            raise StudyError(f"schema: {exc}") from None
    try:
        screening.questions(schema.to_dict())
    except screening.ScreeningError as exc:
        raise StudyError(f"schema: {exc}") from None
    return schema


def schema_design(schema: FeatureSchema) -> str:
    """The design a schema suggests (its evaluation section), else the reference design."""
    design = schema.extra.get("evaluation", {}).get("design")
    if isinstance(design, Mapping) and design:
        return ",".join(f"{k}:{v}" for k, v in design.items())
    return study_config.DEFAULT_DESIGN


def study_config_for_new(
    *, schema: FeatureSchema, settings: Mapping[str, Any]
) -> study_config.StudyConfig:
    """The validated settings of a study about to be made from `schema` (ConfigError
    naming every problem otherwise); outcome codes not given are drawn fresh."""
    base = {
        "design": schema_design(schema),
        "eligibility": eligibility_of(schema.to_dict()),
        "outcome_codes": default_outcome_codes(),
    }
    merged = config_merge(base, settings)
    return study_config.config_validate(
        merged,
        screening=questions_of(schema.to_dict()),
        has_model_blob=False,
        schema=schema,
        now=timezone.now(),
    )


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
    owner: Any = None,
    settings: Mapping[str, Any] | None = None,
) -> Study:
    """Create a draft study; the pool is a table (or CSV text) validated by the engine.

    `texts` maps a language to its page texts; a flat {key: text} is taken as English.
    `settings`: further settings (conditions, quotas, attention checks, ...) by name.
    """
    if texts and not all(isinstance(v, Mapping) for v in texts.values()):
        texts = {"en": dict(texts)}
    schema = schema_of(schema)
    given = {
        "title": title,
        "design": design,
        "texts": texts,
        "consent_version": consent_version,
        "decision_model": decision_model,
        "seed": seed,
        "language": language,
        **(settings or {}),
    }
    if outcome_codes is not None:
        given["outcome_codes"] = outcome_codes
    cfg = study_config_for_new(schema=schema, settings=given)
    if isinstance(pool, pd.DataFrame):
        buf = io.StringIO()
        pool.to_csv(buf, index=False)
        pool_csv = buf.getvalue()
    else:
        pool_csv = pool
    try:
        rows = len(engine_objects.pool_of(pool_csv, schema))
    except (PoolError, ValueError) as exc:
        raise StudyError(f"pool: {exc}") from None
    stored = cfg.stored()
    with transaction.atomic():
        study = Study.objects.create(
            slug=slug,
            schema=schema.to_dict(),
            schema_hash=schema.hash(),
            pool_csv=pool_csv,
            pool_hash=engine_objects.pool_csv_hash(pool_csv),
            pool_rows=rows,
            owner=owner if getattr(owner, "pk", None) else None,
            **{name: stored[name] for name in study_config.SETTINGS if name not in _EXTRA_SETTINGS},
        )
        config_write(study, cfg, [k for k in _EXTRA_SETTINGS if k in given])
    return study


def study_create_from_schema(
    *,
    slug: str,
    title: str,
    schema: Mapping[str, Any] | FeatureSchema,
    owner: Any,
    pool: bytes | None = None,
    pool_size: int = 3683,
    settings: Mapping[str, Any] | None = None,
) -> Study:
    """A new draft study owned by `owner` from a feature schema (the console's upload, the
    API's payload). No pool: the engine's synthetic pool (`pool_size` rows drawn with the
    study's seed); a bad pool raises PoolRejected with the preview of every bad row."""
    slug = slug_check(slug)
    fs = schema_of(schema)
    given = dict(settings or {})
    given.setdefault("title", title)
    cfg = study_config_for_new(schema=fs, settings=given)
    if pool is None:
        if not 10 <= pool_size <= 200_000:
            raise StudyError(f"pool size must be 10..200000, got {pool_size}")
        buf = io.StringIO()
        synth_pool(fs, n=pool_size, seed=cfg.seed).to_csv(buf, index=False)
        pool_text = buf.getvalue()
    else:
        preview = pool_preview(fs, pool)
        if not preview.ok:
            raise PoolRejected(preview)
        pool_text = preview.csv_text
    stored = cfg.stored()
    return study_create(
        slug=slug,
        title=cfg.title,
        schema=fs,
        pool=pool_text,
        design=cfg.design,
        texts=stored["texts"],
        consent_version=cfg.consent_version,
        seed=cfg.seed,
        language=cfg.language,
        owner=owner,
        settings={k: stored[k] for k in given if k not in ("title", "texts")},
    )


_STUDY_MOVES = {
    Study.State.DRAFT: {Study.State.LIVE},
    Study.State.LIVE: {Study.State.CLOSED},
    Study.State.CLOSED: {Study.State.LIVE},
}


def study_set_state(
    *, study: Study, state: str, acknowledged: Sequence[str] = (), by: Any = None
) -> Study:
    """Move a study between states. Going live needs every warning of the study's current
    design check named in `acknowledged` (`design_check.DesignWarnings` otherwise); the
    acknowledgement is recorded on the check with `by`."""
    if state == study.state:
        return study
    if state not in _STUDY_MOVES.get(study.state, set()):
        raise StudyError(f"study {study.slug}: cannot go from {study.state} to {state}")
    if state == Study.State.LIVE:
        from studyapp.generation.method_fitting import generating_methods, methods_check
        from studyapp.studies.model_training import missing_model_problem
        from studyapp.studies.translation_catalogue import missing_problem
        from studyapp.studies.wave_checks import waves_live_problems

        missing = missing_model_problem(study, generating_methods(study))
        problems = [missing] if missing else methods_check(study)
        problems += [p for p in [missing_problem(study)] if p]
        problems += waves_live_problems(study)
        if problems:
            raise StudyError(f"study {study.slug} cannot go live: " + "; ".join(problems))
    with transaction.atomic():
        if state == Study.State.LIVE:
            from studyapp.studies.design_check import acknowledge_for_live

            acknowledge_for_live(study=study, acknowledged=acknowledged, by=by)
        study.state = state
        # retention rules counted from the close count from the last one
        study.closed_at = timezone.now() if state == Study.State.CLOSED else None
        study.save(update_fields=["state", "closed_at", "updated_at"])
    if state == Study.State.LIVE:
        # balanced strategies and generating methods need fits on the pool: a Celery task
        from studyapp.generation.method_fitting import fits_queue

        fits_queue(study=study)
    return study
