"""Payloads of the study endpoints: what a study looks like, and what creating or changing
one may send. Every field is checked here (messages name the field); the writes themselves
are in `studyapp.study_setup`, `studyapp.services` and `study_writes`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth import get_user_model
from rest_framework import serializers

from recourse_engine import DesignError
from studyapp.generation import engine
from studyapp.models import OUTCOMES, STUDY_LANGUAGES, Study
from studyapp.studies import access, study_setup
from studyapp.studies.services import StudyError

LANGUAGE_CODES = [code for code, _ in STUDY_LANGUAGES]
#: decision models the API can choose; an uploaded model file goes through the console
API_DECISION_MODELS = ("income_rule",)


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


def check_design(value: str) -> str:
    try:
        return str(engine.design_of(value))
    except DesignError as exc:
        raise serializers.ValidationError(str(exc)) from None


class ConditionSerializer(StrictSerializer):
    name = serializers.SlugField(max_length=60)
    design = serializers.CharField(
        max_length=500, allow_blank=True, required=False, default="", help_text="Blank: study's."
    )

    def validate_design(self, value: str) -> str:
        return check_design(value) if value.strip() else ""


class OutcomeCodeSerializer(StrictSerializer):
    code = serializers.RegexField(
        r"^[A-Za-z0-9_-]{1,40}$",
        required=False,
        error_messages={"invalid": "1-40 letters, digits, '-' or '_'."},
    )
    redirect_url = serializers.URLField(max_length=500, required=False, allow_blank=True)


class StudySettingsSerializer(StrictSerializer):
    """Fields shared by create and partial update (all optional)."""

    design = serializers.CharField(max_length=500, required=False)
    language = serializers.ChoiceField(choices=STUDY_LANGUAGES, required=False)
    texts = serializers.DictField(
        child=serializers.DictField(
            child=serializers.CharField(allow_blank=True, max_length=20000)
        ),
        required=False,
        help_text="Language -> {text key (consent, scenario, ...) -> text}.",
    )
    consent_version = serializers.CharField(max_length=40, required=False)
    seed = serializers.IntegerField(min_value=0, max_value=2**62, required=False)
    decision_model = serializers.ChoiceField(choices=API_DECISION_MODELS, required=False)
    outcome_codes = serializers.DictField(
        child=OutcomeCodeSerializer(),
        required=False,
        help_text="Outcome -> {code, redirect_url}; outcomes: " + ", ".join(OUTCOMES) + ".",
    )
    panel_param = serializers.RegexField(
        r"^[A-Za-z0-9_.-]{0,60}$",
        required=False,
        allow_blank=True,
        error_messages={"invalid": "A URL parameter name: letters, digits, '_', '.', '-'."},
    )
    assignment_timeout_minutes = serializers.IntegerField(
        min_value=1, max_value=7 * 24 * 60, required=False
    )
    attention_checks = serializers.ListField(
        child=serializers.DictField(), required=False, max_length=50
    )
    attention_max_failures = serializers.IntegerField(min_value=0, max_value=50, required=False)
    attention_rule = serializers.ChoiceField(choices=Study.AttentionRule.choices, required=False)
    conditions = ConditionSerializer(many=True, required=False, max_length=50)

    def validate_design(self, value: str) -> str:
        return check_design(value)

    def validate_texts(self, value: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
        unknown = sorted(set(value) - set(LANGUAGE_CODES))
        if unknown:
            raise serializers.ValidationError(
                f"unknown language(s) {', '.join(unknown)}; expected {', '.join(LANGUAGE_CODES)}"
            )
        return value

    def validate_outcome_codes(self, value: dict[str, dict[str, str]]) -> dict[str, Any]:
        unknown = sorted(set(value) - set(OUTCOMES))
        if unknown:
            raise serializers.ValidationError(
                f"unknown outcome(s) {', '.join(unknown)}; expected {', '.join(OUTCOMES)}"
            )
        return value

    def validate_conditions(self, value: list[dict[str, str]]) -> list[dict[str, str]]:
        names = [c["name"] for c in value]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise serializers.ValidationError(f"duplicate condition name(s): {', '.join(dup)}")
        return value

    def validate_attention_checks(self, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The console's rule (the participant side's validator), cleaned as it stores them."""
        try:
            return study_setup.clean_attention_checks(value)
        except StudyError as exc:
            raise serializers.ValidationError(str(exc)) from None


class StudyCreateSerializer(StudySettingsSerializer):
    slug = serializers.RegexField(
        r"^[-a-zA-Z0-9_]{1,50}$",
        error_messages={"invalid": "1-50 letters, digits, '-' or '_' (it appears in links)."},
    )
    title = serializers.CharField(max_length=200)
    schema = serializers.JSONField(
        required=False,
        allow_null=True,
        help_text="Feature schema (recourse_engine format); omitted or null: the car-loan one.",
    )
    pool = serializers.CharField(
        required=False,
        trim_whitespace=False,
        max_length=64 * 1024 * 1024,
        help_text="Pool CSV text (id, income, one column per item); omitted: a synthetic pool.",
    )
    pool_size = serializers.IntegerField(
        required=False,
        min_value=10,
        max_value=200_000,
        help_text="Rows of the synthetic pool made when no pool is sent (default 3683).",
    )

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


class StudyUpdateSerializer(StudySettingsSerializer):
    """PATCH: the settings plus the title; slug, schema, owner and state are not changed here."""

    title = serializers.CharField(max_length=200, required=False)


class StateSerializer(StrictSerializer):
    state = serializers.ChoiceField(choices=[Study.State.LIVE, Study.State.CLOSED])


class DuplicateSerializer(StrictSerializer):
    slug = serializers.RegexField(
        r"^[-a-zA-Z0-9_]{1,50}$",
        error_messages={"invalid": "1-50 letters, digits, '-' or '_' (it appears in links)."},
    )

    def validate_slug(self, value: str) -> str:
        if Study.objects.filter(slug=value).exists():
            raise serializers.ValidationError("A study with this slug exists already.")
        return value


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


class StudySerializer(serializers.ModelSerializer):
    """A study as researchers see it (the pool's CSV itself is left out; its size and hash
    are in)."""

    owner = serializers.SlugRelatedField(slug_field="username", read_only=True)
    shared_with = serializers.SlugRelatedField(slug_field="username", many=True, read_only=True)
    conditions = ConditionOutSerializer(many=True, read_only=True)
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
            "pool_rows",
            "pool_hash",
            "schema_hash",
            "n_participants",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields

    def get_n_participants(self, study: Study) -> int:
        counted = getattr(study, "participant_count", None)
        return counted if counted is not None else study.participants.count()


class StudyDetailSerializer(StudySerializer):
    class Meta(StudySerializer.Meta):
        fields = [*StudySerializer.Meta.fields, "schema"]
        read_only_fields = fields


class PoolPreviewSerializer(serializers.Serializer):
    """`study_setup.PoolPreview.to_dict()`."""

    ok = serializers.BooleanField()
    rows = serializers.IntegerField()
    rejected = serializers.ListField(child=serializers.DictField())
    distributions = serializers.DictField(
        child=serializers.DictField(child=serializers.IntegerField())
    )
    errors = serializers.ListField(child=serializers.CharField())
    columns = serializers.ListField(child=serializers.CharField())
