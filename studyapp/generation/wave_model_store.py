"""The decision models of a multi-wave study (kind ``multi_wave``, docs/waves.md): the model
in force for each wave and condition, stored once with its hash, and the set of models a
"robust" plan must satisfy.

Kept in the generation layer (below `participation`) because both sides read it: the
re-application scores an updated profile with `model_in_force` (`participation.waves`), and
recourse generation passes `robust_models_for` to the engine's selection when a design asks
for robust plans (the `robust` strategy, or a method whose settings say `robust: true`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from django.db import IntegrityError, transaction

from recourse_engine import Design
from studyapp.definition import engine_objects
from studyapp.definition.wave_settings import WaveSettings
from studyapp.models import Condition, Study
from studyapp.wave_models import Wave, WaveModel


def is_multi_wave(study: Study) -> bool:
    return study.kind == "multi_wave" and bool(study.waves)


def settings_of(study: Study) -> WaveSettings:
    return WaveSettings.model_validate(study.waves)


def policy_of(study: Study, condition: str) -> tuple[str, dict[str, str]]:
    """(model policy, announcement per language) of a condition (its own entry, else the
    blank one, else frozen and unannounced)."""
    if not is_multi_wave(study):
        return "frozen", {}
    policies = {p.condition: p for p in settings_of(study).policies}
    found = policies.get(condition) or policies.get("")
    return (found.model, dict(found.announce)) if found else ("frozen", {})


# --- the model in force ----------------------------------------------------------------------
_MODELS: dict[tuple[int, int], Any] = {}


def _hash(model: Any) -> str:
    from recourse_engine.model_updates import model_hash

    return model_hash(model)


def _label_rule(study: Study) -> Any:
    from recourse_engine.model_training import LabelRule

    raw = (study.decision_model_info or {}).get("label_rule")
    return LabelRule.parse(raw) if raw else None


def _train(study: Study, condition: str, wave: int, policy: str) -> tuple[Any, int]:
    """A wave's model under a retrained or multiplicity policy, and the rows it added."""
    from recourse_engine.model_updates import (
        label_updated_profiles,
        retrain_with,
        train_model_set,
    )

    schema = engine_objects.schema_of(study.schema)
    pool = engine_objects.pool_of(study.pool_csv, schema)
    base = engine_objects.study_model(study, schema)
    rule = _label_rule(study)
    pool_labels = rule.labels(pool) if rule is not None else None
    seed = int(study.seed) * 100 + wave
    if policy == "multiplicity":
        return train_model_set(pool, schema, base, seeds=[seed], labels=pool_labels)[0], 0
    last = Wave.objects.filter(
        participant__study=study, condition=condition, number=wave - 1
    ).order_by("pk")
    rows = [[float(v[k]) for k in schema.keys] for v in last.values_list("values", flat=True)]
    codes = np.array(rows, dtype=float).reshape(-1, schema.d)
    labels = label_updated_profiles(rule, schema, codes, pool=pool)
    model = retrain_with(
        base, pool, schema, codes=codes, labels=labels, seed=seed, pool_labels=pool_labels
    )
    return model, len(rows)


def _blob(model: Any) -> bytes:
    """The model in the engine's file format (as `studies.model_training` stores one)."""
    from recourse_engine import save_model

    with tempfile.TemporaryDirectory() as tmp:
        return save_model(model, Path(tmp) / "model.joblib").read_bytes()


def _loaded(study: Study, row: WaveModel) -> Any:
    """The model a stored row holds (frozen: the study's), loaded once per process."""
    key = (study.pk, row.pk)
    if key not in _MODELS:
        schema = engine_objects.schema_of(study.schema)
        if row.blob:
            _MODELS[key] = engine_objects.model_of("uploaded", blob=bytes(row.blob), schema=schema)
        else:
            _MODELS[key] = engine_objects.study_model(study, schema)
    return _MODELS[key]


def model_in_force(study: Study, condition: str, wave: int) -> tuple[Any, WaveModel]:
    """The decision model for `wave` of `condition` (wave 1, and every wave under the frozen
    policy: the study's), stored once with its hash so every participant of that wave is
    scored by the same model. ModelError when the policy cannot be served (the engine
    names why: the income rule, no label rule, ...)."""
    policy = "frozen" if wave == 1 else policy_of(study, condition)[0]
    row = WaveModel.objects.filter(study=study, condition=condition, wave=wave).first()
    if row is None:
        schema = engine_objects.schema_of(study.schema)
        if policy == "frozen":
            model, added = engine_objects.study_model(study, schema), 0
        else:
            model, added = _train(study, condition, wave, policy)
        blob = None if policy == "frozen" else _blob(model)
        try:
            with transaction.atomic():
                row = WaveModel.objects.create(
                    study=study, condition=condition, wave=wave, policy=policy,
                    model_hash=_hash(model), blob=blob, trained_rows=added,
                )  # fmt: skip
        except IntegrityError:  # another participant's request stored it first
            row = WaveModel.objects.get(study=study, condition=condition, wave=wave)
    return _loaded(study, row), row


# --- robust plans ----------------------------------------------------------------------------
def wants_robust(design: Design, method_params: Mapping[str, Any] | None) -> bool:
    """Whether a design asks for robust plans: a `robust` part, or a generating part whose
    method's settings say `robust: true`."""
    params = method_params or {}
    for part in design.parts:
        if part.strategy == "robust":
            return True
        own = params.get(part.method) if part.method else None
        if isinstance(own, Mapping) and own.get("robust") is True:
            return True
    return False


def _conditions(study: Study) -> list[str]:
    names = list(Condition.objects.filter(study=study).values_list("name", flat=True))
    return names or [""]


def robust_models_for(study: Study, condition: str, wave: int) -> list[Any]:
    """The set a robust plan shown in `wave` must satisfy: the model the participant's plans
    are shown under (their condition's, this wave) and, for every condition of the study,
    the model in force for the coming wave (the last wave's own when there is none after).

    Frozen and multiplicity models of the coming wave do not depend on participants, so
    they are fetched or trained and stored now (`model_in_force`, the very model that will
    score the re-application). A retrained model is trained only when its wave opens, on
    the last wave's profiles; until then the latest one stored for that condition stands
    for it (the study's model before any retraining). One entry per distinct model."""
    coming = min(wave + 1, settings_of(study).count)
    found: dict[str, Any] = {}
    model, row = model_in_force(study, condition, wave)
    found[row.model_hash] = model
    for name in _conditions(study):
        if policy_of(study, name)[0] == "retrained":
            row = (
                WaveModel.objects.filter(study=study, condition=name, wave__lte=coming)
                .order_by("-wave")
                .first()
            )
            model, row = (model_in_force(study, name, 1) if row is None else
                          (_loaded(study, row), row))  # fmt: skip
        else:
            model, row = model_in_force(study, name, coming)
        found.setdefault(row.model_hash, model)
    return list(found.values())


def robust_set_or_none(study: Study, condition: str, wave: int, design: Design) -> list[Any] | None:
    """`robust_models_for` when the study is multi-wave and the design asks for robust plans;
    None otherwise (the engine then marks nothing and `robust` equals `proximate`)."""
    if not is_multi_wave(study) or not wants_robust(design, study.method_params):
        return None
    return robust_models_for(study, condition, wave)
