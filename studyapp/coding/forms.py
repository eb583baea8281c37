"""The coding pages' forms. Every field is validated here; what the database must also agree
with (a duplicate code, a second coding) is refused by `services`."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth import get_user_model

from studyapp.coding.models import Code
from studyapp.coding.units import WHY_FIELDS, answer_fields
from studyapp.models import Condition, Participant, Recourse, Study

MAX_CODEBOOK_BYTES = 1_000_000
SHOW = (
    ("all", "all answers"),
    ("uncoded", "not yet coded by me"),
    ("disagreements", "coders disagree (after all coders finished)"),
    ("unresolved", "no final code yet"),
)


def _choices(values: Any) -> list[tuple[str, str]]:
    return [("", "any")] + [(str(v), str(v)) for v in sorted({v for v in values if v != ""})]


class CodeForm(forms.Form):
    code = forms.CharField(max_length=40, help_text="1-40 of a-z, 0-9, _; starts with a letter")
    definition = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), max_length=2000)
    example = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2}), max_length=2000, required=False
    )


class CodebookUploadForm(forms.Form):
    codebook = forms.FileField(help_text="CSV with columns code, definition, example")

    def clean_codebook(self) -> bytes:
        f = self.cleaned_data["codebook"]
        if f.size > MAX_CODEBOOK_BYTES:
            raise forms.ValidationError(f"the codebook file is over {MAX_CODEBOOK_BYTES} bytes")
        return f.read()


class AssignForm(forms.Form):
    coder = forms.ModelChoiceField(queryset=get_user_model().objects.none())

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        users = get_user_model().objects.filter(is_staff=True, is_active=True)
        self.fields["coder"].queryset = users.order_by("username")  # type: ignore[attr-defined]


class FilterForm(forms.Form):
    """Which answers the answers page lists; bounds are inclusive."""

    field = forms.ChoiceField(required=False)
    strategy = forms.ChoiceField(required=False)
    method = forms.ChoiceField(required=False)
    condition = forms.ChoiceField(required=False)
    sparsity_min = forms.IntegerField(required=False, min_value=0)
    sparsity_max = forms.IntegerField(required=False, min_value=0)
    proximity_min = forms.FloatField(required=False, min_value=0)
    proximity_max = forms.FloatField(required=False, min_value=0)
    rating_min = forms.IntegerField(required=False, min_value=1, max_value=7,
                                    help_text="the rating the answer explains")  # fmt: skip
    rating_max = forms.IntegerField(required=False, min_value=1, max_value=7)
    impossible = forms.ChoiceField(
        required=False,
        choices=[("", "any"), ("yes", "an item marked impossible"), ("no", "none marked")],
    )
    show = forms.ChoiceField(required=False, choices=SHOW)

    def __init__(self, study: Study, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        recourses = Recourse.objects.filter(participant__study=study)
        self.fields["field"].choices = [("", "any")] + [(f, f) for f in answer_fields(study)]
        self.fields["strategy"].choices = _choices(recourses.values_list("strategy", flat=True))
        self.fields["method"].choices = _choices(recourses.values_list("method", flat=True))
        conditions = [
            *Condition.objects.filter(study=study).values_list("name", flat=True),
            *Participant.objects.filter(study=study).values_list("condition", flat=True),
        ]
        self.fields["condition"].choices = _choices(conditions)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        for lo, hi in (("sparsity_min", "sparsity_max"), ("proximity_min", "proximity_max"),
                       ("rating_min", "rating_max")):  # fmt: skip
            if data.get(lo) is not None and data.get(hi) is not None and data[lo] > data[hi]:
                raise forms.ValidationError(f"{lo} ({data[lo]}) is above {hi} ({data[hi]})")
        return data


def code_choices(study: Study) -> list[tuple[str, str]]:
    return [(c.name, c.name) for c in Code.objects.filter(study=study)]


class CodingForm(forms.Form):
    """One answer's codes (none ticked: "no code applies")."""

    evaluation = forms.IntegerField(min_value=1)
    field = forms.ChoiceField()
    codes = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple)
    note = forms.CharField(required=False, max_length=2000)

    def __init__(self, study: Study, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["field"].choices = [(f, f) for f in answer_fields(study)]
        self.fields["codes"].choices = code_choices(study)


class QuotesForm(forms.Form):
    codes = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple,
                                      help_text="final codes; none: any answer")  # fmt: skip
    rating_min = forms.IntegerField(required=False, min_value=1, max_value=7)
    rating_max = forms.IntegerField(required=False, min_value=1, max_value=7)
    field = forms.ChoiceField(required=False,
                              choices=[("", "both")] + [(f, f) for f in WHY_FIELDS])  # fmt: skip
    format = forms.ChoiceField(
        required=False, choices=[("csv", "CSV"), ("md", "Markdown"), ("tex", "LaTeX")]
    )

    def __init__(self, study: Study, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["codes"].choices = code_choices(study)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        lo, hi = data.get("rating_min"), data.get("rating_max")
        if (lo is None) != (hi is None):
            raise forms.ValidationError("a rating band needs both rating_min and rating_max")
        if lo is not None and hi is not None and lo > hi:
            raise forms.ValidationError(f"rating band {lo}-{hi} is empty")
        return data


class SuggestForm(forms.Form):
    field = forms.ChoiceField(choices=[(f, f) for f in WHY_FIELDS])
    k = forms.IntegerField(min_value=2, max_value=30, initial=6, label="groups (k)")
