"""How participants and evaluations leave the API: pseudonymous ids only, the panel id and
free text only when the caller asks for them (and may see them). The access code — a
participant's only credential — never leaves."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from studyapp.models import Evaluation, Participant

PARTICIPANT_FIELDS = [
    "id",
    "condition",
    "state",
    "gender",
    "age",
    "income_band",
    "income_jpy",
    "screening",
    "consent_version",
    "consented_at",
    "generation",
    "generation_attempts",
    "flagged",
    "flag_reason",
    "attention_failures",
    "completion_code",
    "n_evaluations",
    "created_at",
    "updated_at",
    "finished_at",
]
PANEL_FIELDS = ["recruitment_id", "panel"]


class ParticipantSerializer(serializers.ModelSerializer):
    n_evaluations = serializers.IntegerField(read_only=True)

    class Meta:
        model = Participant
        fields = PARTICIPANT_FIELDS
        read_only_fields = fields


class PanelFields(serializers.Serializer):
    """Present only with `?with_panel_ids=1`: documented as optional (drf-spectacular lists
    every read-only field as required, so these are declared plain; nothing writes here)."""

    recruitment_id = serializers.CharField(required=False)
    panel = serializers.JSONField(required=False)


class ParticipantWithPanelSerializer(PanelFields, ParticipantSerializer):
    """`?with_panel_ids=1`, owners only."""

    class Meta(ParticipantSerializer.Meta):
        fields = [*PARTICIPANT_FIELDS, *PANEL_FIELDS]
        read_only_fields = fields


class ParticipantDetailSerializer(ParticipantSerializer):
    """One participant: adds the profile (option codes) and the attention-check answers."""

    profile = serializers.SerializerMethodField()

    class Meta(ParticipantSerializer.Meta):
        fields = [*PARTICIPANT_FIELDS, "attention", "profile"]
        read_only_fields = fields

    def get_profile(self, p: Participant) -> dict[str, Any] | None:
        profile = getattr(p, "profile", None)
        if profile is None:
            return None
        return {"values": profile.values, "decision": profile.decision}


class ParticipantDetailWithPanelSerializer(PanelFields, ParticipantDetailSerializer):
    class Meta(ParticipantDetailSerializer.Meta):
        fields = [*ParticipantDetailSerializer.Meta.fields, *PANEL_FIELDS]
        read_only_fields = fields


EVALUATION_FIELDS = [
    "id",
    "participant",
    "condition",
    "recourse",
    "strategy",
    "position",
    "sparsity",
    "proximity",
    "changed",
    "impossible",
    "acceptance",
    "action",
    "seconds_on_page",
    "submitted_at",
]


class EvaluationSerializer(serializers.ModelSerializer):
    participant = serializers.IntegerField(source="participant_id", read_only=True)
    condition = serializers.CharField(source="participant.condition", read_only=True)
    recourse = serializers.IntegerField(source="recourse_id", read_only=True)
    strategy = serializers.CharField(source="recourse.strategy", read_only=True)
    position = serializers.IntegerField(source="recourse.position", read_only=True)
    sparsity = serializers.IntegerField(source="recourse.sparsity", read_only=True)
    proximity = serializers.FloatField(source="recourse.proximity", read_only=True)
    changed = serializers.ListField(
        source="recourse.changed", child=serializers.CharField(), read_only=True
    )

    class Meta:
        model = Evaluation
        fields = EVALUATION_FIELDS
        read_only_fields = fields


class EvaluationWithTextSerializer(EvaluationSerializer):
    """`?with_text=1`: the free-text reasons too (documented as not required)."""

    acceptance_why = serializers.CharField(required=False)
    action_why = serializers.CharField(required=False)

    class Meta(EvaluationSerializer.Meta):
        fields = [*EVALUATION_FIELDS, "acceptance_why", "action_why"]
        read_only_fields = fields
