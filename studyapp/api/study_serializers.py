"""Payloads of the study endpoints: what a study looks like, and what creating or changing
one may send.

The request's own fields (a slug, a schema, a pool) are checked here; every study setting is
checked by the study configuration model (`definition.study_config`, the console's rules
too), whose path-named problems come back under the setting they start with, e.g.
``{"design": ["design[1]: unknown strategy 'proxmate'; ..."]}``. The OpenAPI document
describes the settings with the same model (pydantic, through drf-spectacular). The writes
themselves are the study services'.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Annotated, Any

from django.contrib.auth import get_user_model
from drf_spectacular.utils import extend_schema_field
from pydantic import BaseModel, ConfigDict, Field, create_model
from rest_framework import serializers

from studyapp.definition import study_config
from studyapp.definition.errors import ConfigError, StudyError
from studyapp.definition.json_schema import setting_json_schema
from studyapp.definition.release_schedule import RELEASE_SETTINGS
from studyapp.models import Study
from studyapp.studies import access, carloan, services, updates

SLUG_PATTERN = r"^[-a-zA-Z0-9_]{1,50}$"


class StrictSerializer(serializers.Serializer):
    """Refuses fields it does not know, so a typo ('desing') is an error, not a no-op."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, Mapping):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                known = ", ".join(self.fields)
                raise serializers.ValidationError(
                    {name: [f"Unknown field; expected one of: {known}."] for name in unknown}
                )
        return super().to_internal_value(data)


class SettingsSerializer(serializers.Serializer):
    """A payload of the request's own fields (declared here) and study settings (every other
    key), the settings checked as one configuration by `check_settings`; the validated data
    holds them under "settings"."""

    def check_settings(self, attrs: dict[str, Any], settings: dict[str, Any]) -> None:
        raise NotImplementedError

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if not isinstance(data, Mapping):
            raise serializers.ValidationError({"non_field_errors": ["Expected a JSON object."]})
        own = {k: v for k, v in data.items() if k in self.fields}
        settings = {k: v for k, v in data.items() if k not in self.fields}
        errors: dict[str, Any] = {}
        attrs: dict[str, Any] = {}
        try:
            attrs = dict(super().to_internal_value(own))
        except serializers.ValidationError as exc:
            errors.update(exc.detail)
        unknown = study_config.unknown_settings(list(settings))
        if unknown:
            errors.update(ConfigError(unknown).by_field())
        elif not errors:
            try:
                self.check_settings(attrs, settings)
            except ConfigError as exc:
                errors.update(exc.by_field())
            except StudyError as exc:
                errors.setdefault("schema", []).append(str(exc))
        if errors:
            raise serializers.ValidationError(errors)
        return {**attrs, "settings": settings}


class StudyCreateSerializer(SettingsSerializer):
    slug = serializers.RegexField(
        SLUG_PATTERN,
        error_messages={"invalid": "1-50 letters, digits, '-' or '_' (it appears in links)."},
    )
    schema = serializers.JSONField(required=False, allow_null=True)
    pool = serializers.CharField(required=False, trim_whitespace=False, max_length=64 * 1024 * 1024)
    pool_size = serializers.IntegerField(required=False, min_value=10, max_value=200_000)

    def validate_slug(self, value: str) -> str:
        if Study.objects.filter(slug=value).exists():
            raise serializers.ValidationError("A study with this slug exists already.")
        return value

    def validate_schema(self, value: Any) -> Any:
        if value is not None and not isinstance(value, dict):
            raise serializers.ValidationError("Expected a JSON object (the feature schema).")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "pool" in attrs and "pool_size" in attrs:
            raise serializers.ValidationError(
                {"pool_size": ["Only for a synthetic pool; leave it out when sending a pool."]}
            )
        return attrs

    def check_settings(self, attrs: dict[str, Any], settings: dict[str, Any]) -> None:
        schema = attrs.get("schema") or carloan.carloan_schema_dict()
        services.study_config_for_new(schema=services.schema_of(schema), settings=settings)


class StudyUpdateSerializer(SettingsSerializer):
    """PATCH: settings only; slug, schema, owner and state are not changed here."""

    def check_settings(self, attrs: dict[str, Any], settings: dict[str, Any]) -> None:
        updates.study_config_check(study=self.context["study"], changes=settings)


class StateSerializer(StrictSerializer):
    state = serializers.ChoiceField(choices=[Study.State.LIVE, Study.State.CLOSED])
    acknowledge = serializers.ListField(
        child=serializers.CharField(max_length=200),
        required=False,
        default=list,
        max_length=200,
        help_text="Going live: the key of each warning of the current design check that you "
        "acknowledge (recorded with your name); a missing one is a 409 listing them.",
    )


class DuplicateSerializer(StrictSerializer):
    slug = serializers.RegexField(
        SLUG_PATTERN,
        error_messages={"invalid": "1-50 letters, digits, '-' or '_' (it appears in links)."},
    )

    def validate_slug(self, value: str) -> str:
        if Study.objects.filter(slug=value).exists():
            raise serializers.ValidationError("A study with this slug exists already.")
        return value


# --- the OpenAPI description of the requests: the configuration model, every field optional --
def _drop_null_defaults(schema: dict[str, Any], cls: Any) -> None:
    for prop in schema.get("properties", {}).values():
        if "default" in prop and prop["default"] is None:
            del prop["default"]


def _optional(model: type[BaseModel], name: str, **replace: Any) -> type[BaseModel]:
    """`model` with every field optional (a change names only what it changes)."""
    fields: dict[str, Any] = {}
    for field_name, info in model.model_fields.items():
        if field_name in replace:
            fields[field_name] = (replace[field_name], None)
            continue
        optional = copy.copy(info)
        optional.default, optional.default_factory = None, None
        fields[field_name] = (info.annotation, optional)
    cfg = ConfigDict(extra="forbid", json_schema_extra=_drop_null_defaults)
    return create_model(name, __config__=cfg, **fields)


OutcomeCodeChange = _optional(study_config.OutcomeCode, "OutcomeCodeChange")
OutcomeCodesChange = _optional(
    study_config.OutcomeCodes,
    "OutcomeCodesChange",
    **{o: OutcomeCodeChange for o in study_config.OutcomeCodes.model_fields},
)
#: PATCH /api/studies/{slug}/: outcome codes are merged per outcome, the rest replaced
StudySettingsChange = _optional(
    study_config.StudyConfig, "StudySettingsChange", outcome_codes=OutcomeCodesChange
)


class StudyCreateRequest(StudySettingsChange):
    """POST /api/studies/: a slug and a title; no schema: the car-loan study (with its
    texts in English and Japanese); no pool: a synthetic one of `pool_size` rows."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_drop_null_defaults)

    slug: Annotated[str, Field(pattern=SLUG_PATTERN)]
    title: Annotated[str, Field(min_length=1, max_length=200)]
    schema_: dict[str, Any] = Field(
        None, alias="schema", description="Feature schema; omitted: the car-loan one."
    )
    pool: str = Field(None, description="Pool CSV text (id, income, one column per item).")
    pool_size: Annotated[int, Field(ge=10, le=200_000)] = Field(
        None, description="Rows of the synthetic pool made when no pool is sent (default 3683)."
    )


# --- what a study looks like -------------------------------------------------------------------
class ShareSerializer(StrictSerializer):
    username = serializers.CharField(max_length=150)
    remove = serializers.BooleanField(
        required=False, default=False, help_text="True: stop sharing with this researcher."
    )

    def validate_username(self, value: str) -> Any:
        user = get_user_model().objects.filter(username=value).first()
        if user is None or not access.is_researcher(user):
            raise serializers.ValidationError("No researcher account with this username.")
        return user


class PoolUploadSerializer(serializers.Serializer):
    """Documentation of the multipart form (the view reads the file itself)."""

    file = serializers.FileField(help_text="The pool CSV (UTF-8, comma-separated).")


class ConditionOutSerializer(serializers.Serializer):
    name = serializers.CharField()
    design = serializers.CharField()
    position = serializers.IntegerField()


def _setting_field(name: str) -> serializers.Field:
    """A stored setting, described in the OpenAPI document by the configuration model."""

    @extend_schema_field(setting_json_schema(name))
    class SettingField(serializers.JSONField):
        pass

    return SettingField(read_only=True)


class StudySerializer(serializers.ModelSerializer):
    """A study as researchers see it (the pool's CSV itself is left out; its size and hash
    are in)."""

    owner = serializers.SlugRelatedField(slug_field="username", read_only=True)
    shared_with = serializers.SlugRelatedField(slug_field="username", many=True, read_only=True)
    texts = _setting_field("texts")
    outcome_codes = _setting_field("outcome_codes")
    attention_checks = _setting_field("attention_checks")
    retention = _setting_field("retention")
    conditions = ConditionOutSerializer(many=True, read_only=True)
    eligibility = serializers.SerializerMethodField()
    quotas = serializers.SerializerMethodField()
    n_participants = serializers.SerializerMethodField()

    class Meta:
        model = Study
        fields = [
            "slug",
            "title",
            "state",
            "owner",
            "shared_with",
            "language",
            "languages",
            "design",
            "decision_model",
            "seed",
            "consent_version",
            "texts",
            "outcome_codes",
            "panel_param",
            "assignment_timeout_minutes",
            "attention_checks",
            "attention_max_failures",
            "attention_rule",
            "conditions",
            "eligibility",
            "quotas",
            "kind",
            *RELEASE_SETTINGS,
            "retention",
            "integrity_signals",
            "closed_at",
            "pool_rows",
            "pool_hash",
            "schema_hash",
            "n_participants",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields

    @extend_schema_field(setting_json_schema("eligibility"))
    def get_eligibility(self, study: Study) -> dict[str, list[int]]:
        return updates.eligibility_of(study.schema)

    @extend_schema_field(setting_json_schema("quotas"))
    def get_quotas(self, study: Study) -> list[dict[str, Any]]:
        return [
            {
                "condition": q.condition.name if q.condition else "",
                "screening_key": q.screening_key,
                "screening_value": q.screening_value,
                "limit": q.limit,
            }
            for q in sorted(study.quotas.all(), key=lambda q: q.pk)
        ]

    def get_n_participants(self, study: Study) -> int:
        counted = getattr(study, "participant_count", None)
        return counted if counted is not None else study.participants.count()


class StudyDetailSerializer(StudySerializer):
    class Meta(StudySerializer.Meta):
        fields = [*StudySerializer.Meta.fields, "schema"]
        read_only_fields = fields


class PoolPreviewSerializer(serializers.Serializer):
    """`pool.PoolPreview.to_dict()`."""

    ok = serializers.BooleanField()
    rows = serializers.IntegerField()
    rejected = serializers.ListField(child=serializers.DictField())
    distributions = serializers.DictField(
        child=serializers.DictField(child=serializers.IntegerField())
    )
    errors = serializers.ListField(child=serializers.CharField())
    columns = serializers.ListField(child=serializers.CharField())
