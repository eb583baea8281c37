"""The decision page's settings in the console: what happens when the decision model
approves a profile (`approved_branch`) and the minimum time on the decision page
(`page_min_seconds.decision`).

Both are plain fields, not JSON editors: a researcher picks a worded choice and types a
number of seconds. Neither is required by the form, so a form posted without one keeps what
the study stores; the values themselves are checked by the settings model (through
`updates.study_config_check`), so the console refuses what the API refuses, with the same
path-named message. A live study shows both read-only, worded as in the form.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from django import forms
from django.contrib import admin
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from studyapp.models import Study
from studyapp.studies import updates

#: the settings this module edits and shows
NAMES = ("approved_branch", "page_min_seconds")
BRANCH_LABEL = "When the decision model approves a profile"
BRANCHES = (
    ("end", "End the study with its own 'approved' outcome and code (recommended)"),
    ("hypothetical", "Continue with a hypothetical rejection, recorded as such"),
)
MINIMUM_LABEL = "Minimum seconds on the decision page"
MAX_SECONDS = 3600
EMPTY = "–"


def branch_field() -> forms.CharField:
    """A choice shown as radio buttons; a posted value outside the choices is left to the
    settings model, whose message names the setting."""
    return forms.CharField(
        required=False,
        label=BRANCH_LABEL,
        widget=forms.RadioSelect(choices=BRANCHES),
        help_text="End: the participant gets the 'approved' text, completion code and return "
        "link (set under Recruitment), and sees no plans. Continue: the page says 'suppose the "
        "model had declined…' and the participant rates plans; the export marks them "
        "hypothetical. Never told 'declined' when the model approved.",
    )


def minimum_field() -> forms.IntegerField:
    """Whole seconds; the range (0..3600) is the settings model's, so its message is the
    API's."""
    return forms.IntegerField(
        required=False,
        label=MINIMUM_LABEL,
        widget=forms.NumberInput(attrs={"min": 0, "max": MAX_SECONDS, "step": 1}),
        error_messages={
            "invalid": f"page_min_seconds.decision: a whole number of seconds, 0..{MAX_SECONDS}"
        },
        help_text="How long the decision (the model's rejection) is shown before its Continue "
        f"is accepted: 0 = no minimum, at most {MAX_SECONDS}. Blank = 0.",
    )


def initial(current: Mapping[str, Any]) -> dict[str, Any]:
    """The form's initial values from the study's settings (the model form would show the
    stored JSON object instead of the number of seconds)."""
    return {
        "approved_branch": current.get("approved_branch", "end"),
        "page_min_seconds": (current.get("page_min_seconds") or {}).get("decision", 0),
    }


def changes(form: forms.BaseForm, data: Mapping[str, Any]) -> dict[str, Any]:
    """The settings as `updates.study_update` takes them, for the fields the form shows and
    was posted: a blank choice keeps the stored one, blank seconds mean none."""
    out: dict[str, Any] = {}
    for name in NAMES:
        field = form.fields.get(name)
        if field is None or name not in data:
            continue
        if field.widget.value_omitted_from_data(form.data, form.files, form.add_prefix(name)):
            continue
        value = data[name]
        if name == "approved_branch":
            if value:
                out[name] = value
        else:
            out[name] = {"decision": 0 if value is None else value}
    return out


def _label(value: str) -> str:
    return dict(BRANCHES).get(value, value)


@admin.display(description=BRANCH_LABEL)
def approved_branch_readout(model_admin: Any, study: Study) -> SafeString:
    if not study.pk:
        return mark_safe(EMPTY)
    return format_html("{}", _label(updates.study_config(study)["approved_branch"]))


@admin.display(description=MINIMUM_LABEL)
def page_min_seconds_readout(model_admin: Any, study: Study) -> SafeString:
    if not study.pk:
        return mark_safe(EMPTY)
    seconds = (updates.study_config(study)["page_min_seconds"] or {}).get("decision", 0)
    return format_html("{}", f"{seconds} seconds" if seconds else "0 (no minimum)")


def admin_methods() -> dict[str, Callable[[Any, Study], SafeString]]:
    """`<name>_readout` display methods for the study admin (the suffix of
    `setting_readout.swap`)."""
    return {
        "approved_branch_readout": approved_branch_readout,
        "page_min_seconds_readout": page_min_seconds_readout,
    }
