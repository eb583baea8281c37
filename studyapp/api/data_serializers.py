"""How participants and evaluations leave the API: pseudonymous ids only, the panel id and
free text only when the caller asks for them (and may see them). The access code — a
participant's only credential — never leaves.

A field that is also an export column carries the export codebook's description of it
(`analysis.contract`), and the evaluation fields are the export's columns less what belongs
to the participant, so the API and the files describe the same facts in the same words."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from analysis import contract, contract_sources
from studyapp.models import Evaluation, Participant

PARTICIPANT_FIELDS = [
    "id",
    "condition",
    "language",
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
PANEL_FIELDS = list(contract.PANEL_COLUMNS)
#: API field -> the export column it is, where the names differ
_AS_COLUMN = {"id": "participant", "income_jpy": "income", "created_at": "started_at"}


def _help(column: str, file: str = contract.PARTICIPANTS) -> str:
    """The export's description of a column of `file`, worded for any study and for a JSON
    value."""
    return contract.column(file, column).describe(in_file=False)


def _described(fields: list[str], renamed: dict[str, str], file: str) -> dict[str, dict[str, str]]:
    """`extra_kwargs` giving each field that is a column of `file` the export's description."""
    return {
        f: {"help_text": _help(renamed.get(f, f), file)}
        for f in fields
        if renamed.get(f, f) in contract.COLUMNS
    }


class ParticipantSerializer(serializers.ModelSerializer):
    n_evaluations = serializers.IntegerField(read_only=True, help_text=_help("n_evaluations"))

    class Meta:
        model = Participant
        fields = PARTICIPANT_FIELDS
        read_only_fields = fields
        extra_kwargs = _described(PARTICIPANT_FIELDS, _AS_COLUMN, contract.PARTICIPANTS)


class PanelFields(serializers.Serializer):
    """Present only with `?with_panel_ids=1`: documented as optional (drf-spectacular lists
    every read-only field as required, so these are declared plain; nothing writes here)."""

    recruitment_id = serializers.CharField(required=False, help_text=_help("recruitment_id"))
    panel = serializers.JSONField(required=False, help_text=_help("panel"))


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


#: the export's evaluation columns less the participant's attributes (the participant
#: endpoints have them) and `any_impossible` (`impossible` is a list here); text on request
EVALUATION_FIELDS = [
    "id",
    *(
        c
        for c in contract.evaluation_columns([], with_text=False)
        if c not in ("study", "gender", "age", "income", "any_impossible")
    ),
]


def _column(field: type[serializers.Field], column: str, **kw: Any) -> Any:
    """A read-only field read from where the export reads the column (`contract_sources.SOURCES`),
    described as the export column it is."""
    (source,) = contract_sources.SOURCES[contract.EVALUATIONS][column]
    return field(source=source.replace("__", "."), read_only=True, help_text=_help(column), **kw)


class EvaluationSerializer(serializers.ModelSerializer):
    participant = _column(serializers.IntegerField, "participant")
    condition = _column(serializers.CharField, "condition")
    recourse = _column(serializers.IntegerField, "recourse")
    strategy = _column(serializers.CharField, "strategy")
    position = _column(serializers.IntegerField, "position")
    sparsity = _column(serializers.IntegerField, "sparsity")
    proximity = _column(serializers.FloatField, "proximity")
    changed = _column(serializers.ListField, "changed", child=serializers.CharField())
    origin = _column(serializers.CharField, "origin")
    method = _column(serializers.CharField, "method")
    sparsity_rank = _column(serializers.IntegerField, "sparsity_rank", allow_null=True)
    proximity_rank = _column(serializers.IntegerField, "proximity_rank", allow_null=True)
    method_params = _column(serializers.JSONField, "method_params")
    fit_version = _column(serializers.CharField, "fit_version")
    fallback = _column(serializers.CharField, "fallback")

    class Meta:
        model = Evaluation
        fields = EVALUATION_FIELDS
        read_only_fields = fields
        extra_kwargs = _described(EVALUATION_FIELDS, {}, contract.EVALUATIONS)


class EvaluationWithTextSerializer(EvaluationSerializer):
    """`?with_text=1`: the free-text reasons too (documented as not required)."""

    acceptance_why = serializers.CharField(required=False, help_text=_help("acceptance_why"))
    action_why = serializers.CharField(required=False, help_text=_help("action_why"))

    class Meta(EvaluationSerializer.Meta):
        fields = [*EVALUATION_FIELDS, *contract.TEXT_COLUMNS]
        read_only_fields = fields
