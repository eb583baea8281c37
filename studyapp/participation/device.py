"""The device a participant arrives on, as the welcome page's script (`studyapp/device.js`)
measures it and posts it with the start button: its class (phone, tablet, desktop) and the
browser window's size in CSS px, kept per participant so that an analyst can use them as
covariates. A browser that runs no script posts them blank, and nothing is recorded; a
value no script would send is refused with its field named, and no participant is made.
"""

from __future__ import annotations

from typing import Any

from django import forms

from studyapp.models import Participant

#: the largest window side believed (CSS px); a larger one is not a browser's
VIEWPORT_MAX = 20000


class DeviceForm(forms.Form):
    device_class = forms.ChoiceField(choices=Participant.Device.choices, required=False)
    viewport_width = forms.IntegerField(min_value=1, max_value=VIEWPORT_MAX, required=False)
    viewport_height = forms.IntegerField(min_value=1, max_value=VIEWPORT_MAX, required=False)

    def problem(self) -> str:
        """Each refused value by its field: "viewport_width: Ensure this value is ..."."""
        return "; ".join(f"{name}: {' '.join(errors)}" for name, errors in self.errors.items())


def device_from(posted: Any) -> dict[str, Any]:
    """The participant fields for the device in a welcome form's POST; ValueError naming
    the field when a value cannot be one."""
    form = DeviceForm(posted)
    if not form.is_valid():
        raise ValueError(form.problem())
    return dict(form.cleaned_data)
