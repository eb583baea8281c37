"""The coding pages' forms. Every field is validated here; what the database must also agree
with (a duplicate code, a second coding) is refused by `services`."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth import get_user_model

from studyapp.coding.models import Code
from studyapp.coding.units import WHY_FIELDS, all_fields, answer_fields
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


def _distinct(qs: Any, column: str) -> Any:
    """The distinct values of a column, found by the database (not one row per answer)."""
    return qs.order_by().values_list(column, flat=True).distinct()


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


#: filters that would tell a blind coder the recourse, and those that tell the plan
RECOURSE_FIELDS = ("strategy", "method", "condition")
PLAN_FIELDS = ("sparsity_min", "sparsity_max", "proximity_min", "proximity_max", "impossible")


class FilterForm(forms.Form):
    """Which answers the answers page lists; bounds are inclusive. For a blind coder the
    filters on method, condition and strategy (and on the plan, when the study hides it) are
    not offered, and asking for them is refused."""

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

    def __init__(
        self, study: Study, *args: Any, hidden: tuple[str, ...] = (), **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.hidden = hidden
        self.fields["field"].choices = [("", "any")] + [(f, f) for f in answer_fields(study)]
        for name in hidden:
            del self.fields[name]
        if "strategy" in self.fields:  # one pass over the study's recourses for both lists
            pairs = list(
                Recourse.objects.filter(participant__study=study)
                .order_by()
                .values_list("strategy", "method")
                .distinct()
            )
            self.fields["strategy"].choices = _choices(p[0] for p in pairs)
            self.fields["method"].choices = _choices(p[1] for p in pairs)
        if "condition" in self.fields:
            conditions = [
                *Condition.objects.filter(study=study).values_list("name", flat=True),
                *_distinct(Participant.objects.filter(study=study), "condition"),
            ]
            self.fields["condition"].choices = _choices(conditions)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        asked = [n for n in self.hidden if self.data.get(n) not in (None, "")]
        if asked:
            raise forms.ValidationError(
                f"the filter {asked[0]!r} is hidden from coders until every coder has finished"
            )
        for lo, hi in (("sparsity_min", "sparsity_max"), ("proximity_min", "proximity_max"),
                       ("rating_min", "rating_max")):  # fmt: skip
            if data.get(lo) is not None and data.get(hi) is not None and data[lo] > data[hi]:
                raise forms.ValidationError(f"{lo} ({data[lo]}) is above {hi} ({data[hi]})")
        return data


def code_choices(study: Study) -> list[tuple[str, str]]:
    return [(c.name, c.name) for c in Code.objects.filter(study=study)]


class CodingForm(forms.Form):
    """One answer's codes (none ticked: "no code applies"). The answer is its `unit`, or an
    evaluation's primary key and a field; the field must be one the study codes."""

    unit = forms.CharField(required=False, max_length=100)
    evaluation = forms.IntegerField(min_value=1, required=False)
    field = forms.CharField(required=False, max_length=70)
    codes = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple)
    note = forms.CharField(required=False, max_length=2000)
    action = forms.ChoiceField(required=False, choices=[("", "save"), ("edit", "edit"),
                                                         ("undo", "undo"), ("memo", "memo")])  # fmt: skip
    memo = forms.CharField(required=False, max_length=5000)

    def __init__(self, study: Study, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.study = study
        self.fields["codes"].choices = code_choices(study)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        name = (data.get("field") or "").strip()
        if name:
            known = [f.name for f in all_fields(self.study)]
            coded = answer_fields(self.study)
            if name not in coded:
                why = "is not coded in this study" if name in known else (
                    "is not a free-text field of this study")  # fmt: skip
                raise forms.ValidationError(
                    f"unknown coding field {name!r}: it {why} (coded: {', '.join(coded)})"
                )
        if not data.get("unit") and not (data.get("evaluation") and name):
            raise forms.ValidationError("name the answer: a unit, or an evaluation and a field")
        return data


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
    field = forms.ChoiceField()
    k = forms.IntegerField(min_value=2, max_value=30, initial=6, label="groups (k)")

    def __init__(self, study: Study, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["field"].choices = [(f, f) for f in answer_fields(study)]


class _AnyChoice(forms.MultipleChoiceField):
    """Ticked fields, checked by `services.settings_save` (which names an unknown one)."""

    def valid_value(self, value: str) -> bool:
        return True


class SettingsForm(forms.Form):
    """The study's coding settings."""

    blind = forms.BooleanField(required=False, label="Coders are blind to method, condition "
                               "and strategy until every coder has finished")  # fmt: skip
    show_plan = forms.BooleanField(required=False, label="Coders see the plan (changed items)")
    coded_fields = _AnyChoice(required=False, widget=forms.CheckboxSelectMultiple,
                              label="Fields to code",
                              help_text="none ticked: every free-text field")  # fmt: skip

    def __init__(self, study: Study, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["coded_fields"].choices = [(f.name, f.label) for f in all_fields(study)]


class CodeEditForm(forms.Form):
    code = forms.CharField(max_length=40)
    definition = forms.CharField(max_length=2000, required=False)
    example = forms.CharField(max_length=2000, required=False)
