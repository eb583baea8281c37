"""Query filters of the participant and evaluation lists (django-filter: a bad value is a
400 naming the parameter, not an empty list)."""

from __future__ import annotations

import django_filters

from studyapp.models import Evaluation, Participant


class ParticipantFilter(django_filters.FilterSet):
    state = django_filters.ChoiceFilter(choices=Participant.State.choices)
    condition = django_filters.CharFilter()
    flagged = django_filters.BooleanFilter()
    created_after = django_filters.IsoDateTimeFilter(field_name="created_at", lookup_expr="gte")
    created_before = django_filters.IsoDateTimeFilter(field_name="created_at", lookup_expr="lt")

    class Meta:
        model = Participant
        fields = ["state", "condition", "flagged", "created_after", "created_before"]


class EvaluationFilter(django_filters.FilterSet):
    participant = django_filters.NumberFilter(field_name="participant_id", min_value=1)
    strategy = django_filters.CharFilter(field_name="recourse__strategy")
    condition = django_filters.CharFilter(field_name="participant__condition")

    class Meta:
        model = Evaluation
        fields = ["participant", "strategy", "condition"]
