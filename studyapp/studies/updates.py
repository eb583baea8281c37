"""Changing a study's settings, sharing it, deleting it; and which settings freeze once it
goes live.

The admin console, the console forms and the API all ask this module which settings are
frozen (`DRAFT_ONLY`, `frozen_parts`) and all change settings through `study_update`, so a
live study refuses the same changes everywhere. A change is validated as a whole study
configuration (`definition.study_config.StudyConfig`: the current settings with the change
applied), so a quota naming a condition that the same change removes is refused, not silently dropped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.db import transaction
from django.utils import timezone

from recourse_engine import FeatureSchema, SchemaError, load_schema
from studyapp.definition import screening
from studyapp.definition.decision_model import decision_model_check
from studyapp.definition.errors import ConfigError, StudyError, StudyFrozen
from studyapp.definition.model_card import decision_model_card
from studyapp.definition.release_schedule import RELEASE_SETTINGS
from studyapp.definition.study_config import (
    SETTINGS,
    StudyConfig,
    config_validate,
    placeholders,
    unknown_settings,
)
from studyapp.models import Condition, Participant, Quota, Study
from studyapp.participation import release

#: settings that decide what participants see and get; frozen once the study goes live
DRAFT_ONLY = (
    "design",
    "decision_model",
    "method_params",
    "method_fallback",
    "seed",
    "language",
    "languages",
    "texts",
    "consent_version",
    "eligibility",
    "attention_checks",
    "attention_max_failures",
    "attention_rule",
    "conditions",
    "page_order",
    "questions",
    "random_item_order",
    "assignment",
    "page_timeouts",
    "page_min_seconds",
    "approved_branch",
    "kind",
    "integrity_signals",
    "waves",
)
#: settings a researcher may change at any time (a title, the panel's codes and redirects,
#: quotas: a top-up only turns fewer people away; the release schedule, which those still
#: waiting follow)
ALWAYS = (
    "title", "outcome_codes", "panel_param", "assignment_timeout_minutes", "quotas",
    "waiting_timeout_s", "design_check_thresholds", *RELEASE_SETTINGS, "time_zone", "retention",
)  # fmt: skip
#: parts of a study that are not settings but freeze the same way
DRAFT_ONLY_PARTS = ("schema", "pool")

assert sorted(DRAFT_ONLY + ALWAYS) == sorted(SETTINGS), "every setting is classified"


def frozen_parts(study: Study) -> tuple[str, ...]:
    """What may no longer change on this study (nothing while it is a draft)."""
    return () if study.state == Study.State.DRAFT else DRAFT_ONLY + DRAFT_ONLY_PARTS


def require_draft(study: Study, *what: str) -> None:
    """StudyFrozen naming `what` unless the study is a draft."""
    if study.state != Study.State.DRAFT:
        verb = "is" if len(what) == 1 else "are"
        raise StudyFrozen(
            f"study {study.slug} is {study.state}: {', '.join(what)} {verb} frozen once it "
            "has gone live (duplicate it to make a changed copy)"
        )


def questions_of(schema: Mapping[str, Any]) -> list[dict[str, Any]]:
    try:
        return screening.questions(schema)
    except screening.ScreeningError:
        return []


def schema_or_none(schema: Mapping[str, Any]) -> FeatureSchema | None:
    """The study's feature schema, or None when the stored one does not load."""
    try:
        return load_schema(schema)
    except SchemaError:
        return None


def eligibility_of(schema: Mapping[str, Any]) -> dict[str, list[int]]:
    """Screening question key -> eligible codes, as the schema's questions hold them."""
    eligibility = {}
    for q in questions_of(schema):
        codes = q.get("eligible") if q["type"] == "choice" else q.get("eligible_only")
        if q["type"] != "integer" and codes:
            eligibility[q["key"]] = list(codes)
    return eligibility


def quotas_of(study: Study) -> list[dict[str, Any]]:
    """The study's quota rows as the `quotas` setting holds them (a condition by name)."""
    return [
        {
            "condition": q.condition.name if q.condition_id else "",
            "screening_key": q.screening_key,
            "screening_value": q.screening_value,
            "limit": q.limit,
        }
        for q in study.quotas.select_related("condition").order_by("pk")
    ]


def study_config(study: Study) -> dict[str, Any]:
    """The study's current settings, shaped as `definition.study_config.StudyConfig` reads them."""
    eligibility = eligibility_of(study.schema)
    return {
        "title": study.title,
        "language": study.language,
        "languages": study.languages or [],
        "texts": study.texts or {},
        "consent_version": study.consent_version,
        "design": study.design,
        "decision_model": study.decision_model,
        "method_params": study.method_params or {},
        "method_fallback": study.method_fallback,
        "seed": study.seed,
        "eligibility": eligibility,
        "conditions": [{"name": c.name, "design": c.design} for c in study.conditions.all()],
        "quotas": quotas_of(study),
        "attention_checks": study.attention_checks or [],
        "attention_max_failures": study.attention_max_failures,
        "attention_rule": study.attention_rule,
        "outcome_codes": study.outcome_codes or {},
        "panel_param": study.panel_param,
        "assignment_timeout_minutes": study.assignment_timeout_minutes,
        "page_order": study.page_order,
        "questions": study.questions or [],
        "random_item_order": study.random_item_order or [],
        "assignment": study.assignment,
        "waiting_timeout_s": study.waiting_timeout_s,
        "page_timeouts": study.page_timeouts or {},
        "page_min_seconds": study.page_min_seconds or {},
        "approved_branch": study.approved_branch,
        "design_check_thresholds": study.design_check_thresholds or {},
        "kind": study.kind,
        **{name: getattr(study, name) for name in RELEASE_SETTINGS},
        "time_zone": study.time_zone,
        "retention": study.retention or {},
        "integrity_signals": study.integrity_signals,
        "waves": study.waves,
    }


def config_merge(current: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """The settings after `changes`; outcome codes are merged per outcome (a change may
    send one outcome's redirect only), every other setting is replaced."""
    merged = {**current, **changes}
    codes, old = changes.get("outcome_codes"), current.get("outcome_codes")
    if isinstance(codes, Mapping) and isinstance(old, Mapping):
        out = {k: dict(v) if isinstance(v, Mapping) else v for k, v in old.items()}
        for outcome, entry in codes.items():
            prev = out.get(outcome)
            both = isinstance(prev, dict) and isinstance(entry, Mapping)
            out[outcome] = {**prev, **entry} if both else entry
        merged["outcome_codes"] = out
    return merged


def study_config_check(
    *, study: Study, changes: Mapping[str, Any], model_blob: bytes | None = None
) -> StudyConfig:
    """The study's configuration with `changes` applied, validated (ConfigError otherwise).

    What the console form and the API serializer call before saving; `study_update` calls
    it again on the locked row. A stored setting that the rules refuse (kept from before
    they were this strict) is reported only when it is being changed: it must not block a
    change to another setting, e.g. the title of a live study whose texts are frozen.
    """
    unknown = unknown_settings(list(changes))
    if unknown:
        raise ConfigError(unknown)
    current = study_config(study)
    merged = config_merge(current, changes)
    context = {
        "screening": questions_of(study.schema),
        "has_model_blob": bool(study.decision_model_blob) or bool(model_blob),
        "schema": schema_or_none(study.schema),
        "now": timezone.now(),
        "stored_release_at": study.release_at,
    }
    try:
        return config_validate(merged, **context)
    except ConfigError:
        # new conditions rewrite the quotas: those must then be valid too
        written = set(changes) | ({"quotas"} if "conditions" in changes else set())
        stale = _stored_faults(current, context) - written
        if not stale:
            raise
    # stand-ins are checked in place of the faulty stored values, never written
    return config_validate({**merged, **placeholders(sorted(stale))}, **context)


def _stored_faults(current: Mapping[str, Any], context: Mapping[str, Any]) -> set[str]:
    """The stored settings the rules refuse on their own (kept from before they were this
    strict), each replaced by a stand-in until the rest passes."""
    stand_ins: dict[str, Any] = {}
    while True:
        try:
            config_validate({**current, **stand_ins}, **context)
            return set(stand_ins)
        except ConfigError as exc:
            faulty = set(exc.by_field()) - set(stand_ins) - {"non_field_errors"}
            if not faulty:
                return set(stand_ins)
            stand_ins.update(placeholders(sorted(faulty)))


def _write_eligibility(study: Study, eligibility: Mapping[str, list[int]]) -> None:
    schema = dict(study.schema)
    questions = []
    for q in schema.get("screening", []):
        q = dict(q) if isinstance(q, Mapping) else q
        if isinstance(q, dict) and q.get("type") in ("choice", "multi"):
            name = "eligible" if q["type"] == "choice" else "eligible_only"
            codes = eligibility.get(q.get("key"), [])
            if codes:
                q[name] = list(codes)
            else:
                q.pop(name, None)
        questions.append(q)
    schema["screening"] = questions
    study.schema = schema


def _write_conditions(study: Study, cfg: StudyConfig) -> None:
    if study.participants.exclude(condition="").exists():
        raise StudyFrozen(
            f"study {study.slug}: participants are already assigned to conditions; "
            "duplicate the study to change them"
        )
    study.conditions.all().delete()
    Condition.objects.bulk_create(
        Condition(study=study, name=c.name, design=c.design, position=i)
        for i, c in enumerate(cfg.conditions)
    )


def quotas_write(study: Study, quotas: Sequence[Mapping[str, Any]]) -> None:
    """Replace the study's quota rows with `quotas` (as the `quotas` setting holds them: a
    condition by name, blank for all); the one writer of quota rows."""
    study.quotas.all().delete()
    by_name = {c.name: c for c in study.conditions.all()}
    Quota.objects.bulk_create(
        Quota(
            study=study,
            condition=by_name.get(q["condition"]) if q["condition"] else None,
            screening_key=q["screening_key"],
            screening_value=q["screening_value"],
            limit=q["limit"],
        )
        for q in quotas
    )


#: settings kept on the study row itself, under the same name
ROW_FIELDS = tuple(s for s in SETTINGS if s not in ("eligibility", "conditions", "quotas"))


def config_write(
    study: Study, cfg: StudyConfig, keys: list[str], *, model_blob: bytes | None = None
) -> None:
    """Store the settings named by `keys` from a validated configuration (in the caller's
    transaction, on a locked or new row)."""
    current = study_config(study)
    stored = cfg.stored()
    fields = [k for k in keys if k in ROW_FIELDS]
    for name in fields:
        setattr(study, name, stored[name])
    if "decision_model" in keys:
        if cfg.decision_model != "uploaded":
            study.decision_model_blob = None
            study.decision_model_info = {}
        elif model_blob:
            decision_model_check(study=study, blob=model_blob)
            study.decision_model_blob = bytes(model_blob)
            study.decision_model_info = decision_model_card(
                study=study, blob=model_blob, source="uploaded", at=timezone.now()
            )
        fields += ["decision_model_blob", "decision_model_info"]
    if "eligibility" in keys:
        _write_eligibility(study, stored["eligibility"])
        fields.append("schema")
    if fields:
        study.save(update_fields=[*fields, "updated_at"])
    conditions = "conditions" in keys and stored["conditions"] != current["conditions"]
    if conditions:
        _write_conditions(study, cfg)
    if conditions or ("quotas" in keys and stored["quotas"] != current["quotas"]):
        quotas_write(study, stored["quotas"])
    if any(k in RELEASE_SETTINGS for k in keys):
        _reschedule(study)


def _reschedule(study: Study) -> None:
    """Participants still waiting for their release follow the study's schedule."""
    waiting = list(
        Participant.objects.filter(
            study=study, submitted_at__isnull=False, released_at__isnull=True
        ).only("pk", "submitted_at")
    )
    for p in waiting:
        p.release_due_at = release.due_at(study, p.submitted_at)
    Participant.objects.bulk_update(waiting, ["release_due_at"], batch_size=500)


def study_update(
    *, study: Study, changes: Mapping[str, Any], model_blob: bytes | None = None
) -> Study:
    """Apply setting changes, all or nothing; draft-only ones on a draft only.

    `model_blob`: an uploaded decision-model file to store with decision_model 'uploaded'.
    """
    with transaction.atomic():
        locked = Study.objects.select_for_update().get(pk=study.pk)
        frozen = [k for k in DRAFT_ONLY if k in changes]
        if frozen:
            require_draft(locked, *frozen)
        cfg = study_config_check(study=locked, changes=changes, model_blob=model_blob)
        config_write(locked, cfg, list(changes), model_blob=model_blob)
    study.refresh_from_db()
    return study


def study_update_design(*, study: Study, design: str) -> Study:
    """Change a draft study's design."""
    return study_update(study=study, changes={"design": design})


def study_set_decision_model(*, study: Study, name: str, blob: bytes | None = None) -> Study:
    """Choose a built-in decision model, or store an uploaded model file (draft only)."""
    if name == "uploaded" and blob is not None:
        decision_model_check(study=study, blob=blob)
    return study_update(study=study, changes={"decision_model": name}, model_blob=blob)


def study_share(*, study: Study, user: Any, remove: bool = False) -> Study:
    """Share the study with another researcher (or stop sharing); the owner is never listed."""
    if study.owner_id == user.pk:
        raise StudyError(f"{user.username} owns study {study.slug}; owners are not shared with")
    if remove:
        study.shared_with.remove(user)
    else:
        study.shared_with.add(user)
    return study


def study_set_shared_with(*, study: Study, users: Any) -> Study:
    """Share the study with exactly `users` (the console's list of researchers)."""
    wanted = {u.pk: u for u in users if u.pk != study.owner_id}
    with transaction.atomic():
        for user in study.shared_with.all():
            if user.pk not in wanted:
                study_share(study=study, user=user, remove=True)
        for user in wanted.values():
            study_share(study=study, user=user)
    return study


def study_delete(*, study: Study) -> None:
    """Delete a study nobody has taken part in (participants' data is never dropped here)."""
    with transaction.atomic():
        locked = Study.objects.select_for_update().get(pk=study.pk)
        n = locked.participants.count()
        if n:
            raise StudyError(
                f"study {locked.slug} has {n} participant(s); close it instead of deleting it"
            )
        locked.delete()
