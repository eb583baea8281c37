"""A study's decision model from the console: trained on the study's own pool with a label
rule, or an uploaded model file; and what going live asks of it.

Generated recourse methods need a model that judges a profile by its items alone (the
income rule compares incomes, which a generated profile does not have). A researcher can now
train one without the command line: a logistic regression or gradient boosting
(`recourse_engine.model_training`), learning "approved" from an income threshold, the pool's
top income quantile or a 0/1 `approved` column of the pool. The model is stored as an
uploaded one would be (decision model "uploaded"), with its card (`definition.model_card`),
so methods fit against it exactly as against an upload. A draft may name methods before the
model exists; `missing_model_problem` is what going live then says.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import timezone

from recourse_engine import ModelError, PoolError, save_model
from recourse_engine.model_training import (
    MODEL_KINDS,
    LabelRule,
    LabelRuleError,
    train_decision_model,
)
from studyapp.definition import engine_objects as engine
from studyapp.definition.errors import ConfigError, StudyError
from studyapp.definition.model_card import decision_model_card
from studyapp.models import Study
from studyapp.studies import updates

#: what to do when a design names methods and no trained model is stored
TRAIN_HINT = (
    "train one on the pool in the console (the study page's 'Decision model' button: logistic "
    "regression or gradient boosting, labelled by an income threshold, a top income quantile "
    "or the pool's 0/1 'approved' column) or upload a model file, then go live again"
)


def _rule_problem(exc: LabelRuleError) -> ConfigError:
    return ConfigError([(f"label_rule.{exc.path}" if exc.path else "label_rule", exc.problem)])


def model_blob(model: Any) -> bytes:
    """A model saved in the engine's file format, as bytes for the study row."""
    with tempfile.TemporaryDirectory() as tmp:
        return save_model(model, Path(tmp) / "model.joblib").read_bytes()


def study_train_decision_model(
    *,
    study: Study,
    kind: str,
    label_rule: Mapping[str, Any],
    now: datetime | None = None,
) -> Study:
    """Train a model of `kind` on the study's pool with `label_rule` and store it as the
    study's decision model, with its card (draft only; all or nothing).

    ConfigError names the faulty part (``label_rule.column: ...``, ``model_kind: ...``); nothing
    is stored then."""
    updates.require_draft(study, "its decision model")
    if kind not in MODEL_KINDS:
        raise ConfigError([("model_kind", f"{kind!r} is not one of {', '.join(MODEL_KINDS)}")])
    try:
        rule = LabelRule.parse(label_rule)
    except LabelRuleError as exc:
        raise _rule_problem(exc) from None
    try:
        schema = engine.schema_of(study.schema)
        pool = engine.pool_of(study.pool_csv, schema, source=f"study {study.slug} pool")
    except (PoolError, ValueError) as exc:
        raise StudyError(f"the study's schema or pool cannot be used: {exc}") from None
    try:
        model = train_decision_model(schema, pool, rule, kind=kind, seed=int(study.seed))
    except LabelRuleError as exc:
        raise _rule_problem(exc) from None
    except ModelError as exc:
        raise StudyError(f"decision model: {exc}") from None
    blob = model_blob(model)
    at = now or timezone.now()
    with transaction.atomic():
        updates.study_update(study=study, changes={"decision_model": "uploaded"}, model_blob=blob)
        card = decision_model_card(study=study, blob=blob, source="trained", at=at, label_rule=rule)
        Study.objects.filter(pk=study.pk).update(decision_model_info=card)
    study.refresh_from_db()
    return study


def missing_model_problem(study: Study, methods: list[str]) -> str | None:
    """Why the study cannot go live for want of a trained model (None: it has one, or its
    designs generate with no method)."""
    if not methods:
        return None
    if study.decision_model == "uploaded" and study.decision_model_blob:
        return None
    has = "no model file stored" if study.decision_model == "uploaded" else "the income rule"
    return (
        f"the design names {', '.join(methods)}, which need a decision model that judges a "
        f"profile by its items, and this study has {has}: {TRAIN_HINT}"
    )
