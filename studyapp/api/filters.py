"""Query filters of the participant and evaluation lists (django-filter: a bad value is a
400 naming the parameter, not an empty list)."""

from __future__ import annotations

from typing import Any

import django_filters
from django import forms

from studyapp.models import Evaluation, Participant


class StrictBooleanField(forms.NullBooleanField):
    """true/false/1/0/yes/no; anything else is an error, not "no filter"."""

    widget = forms.TextInput  # the select widget turns unknown values into None

    def to_python(self, value: Any) -> bool | None:
        if value in (None, ""):
            return None
        text = str(value).strip().lower()
        if text in ("true", "1", "yes"):
            return True
        if text in ("false", "0", "no"):
            return False
        raise forms.ValidationError("Expected true or false (1 or 0).", code="invalid")

    def validate(self, value: Any) -> None:
        pass


class StrictBooleanFilter(django_filters.BooleanFilter):
    field_class = StrictBooleanField


class ParticipantFilter(django_filters.FilterSet):
    state = django_filters.ChoiceFilter(choices=Participant.State.choices)
    condition = django_filters.CharFilter()
    flagged = StrictBooleanFilter()
    created_after = django_filters.IsoDateTimeFilter(field_name="created_at", lookup_expr="gte")
    created_before = django_filters.IsoDateTimeFilter(field_name="created_at", lookup_expr="lt")

    class Meta:
        model = Participant
        fields = ["state", "condition", "flagged", "created_after", "created_before"]


class EvaluationFilter(django_filters.FilterSet):
    participant = django_filters.NumberFilter(
        field_name="participant_id", min_value=1, max_value=2**63 - 1
    )
    strategy = django_filters.CharFilter(field_name="recourse__strategy")
    condition = django_filters.CharFilter(field_name="participant__condition")

    class Meta:
        model = Evaluation
        fields = ["participant", "strategy", "condition"]
