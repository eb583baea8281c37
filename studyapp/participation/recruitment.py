"""Recruitment panels: the panel ids a study link carries (each outcome's code and return
link are `definition.outcomes`).

A link from Prolific carries ``PROLIFIC_PID`` (+ ``STUDY_ID``, ``SESSION_ID``), one from
MTurk ``workerId`` (+ ``assignmentId``, ``hitId``); a panel company's id comes in the
parameter the study names in ``panel_param``. The first id present (the study's own
parameter first) becomes the participant's ``recruitment_id``; the companions go to
``panel``. Every value is checked, so a bad link gets a clear 400 and creates nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from django.utils.translation import gettext as _

from studyapp.models import Study

#: parameters carrying a panel member's id, with the companions kept beside it
PANEL_IDS: dict[str, tuple[str, ...]] = {
    "PROLIFIC_PID": ("STUDY_ID", "SESSION_ID"),
    "workerId": ("assignmentId", "hitId"),
    "participant_label": (),
    "pid": (),
}
_VALUE = re.compile(r"^[A-Za-z0-9_.\-]{1,100}$")


class PanelError(ValueError):
    """A panel parameter in the link that cannot be used; the message names it."""


@dataclass
class Arrival:
    """What a study link says about who arrives; `params` are carried through the welcome
    page's form (hidden fields) and checked again on its POST."""

    recruitment_id: str = ""
    panel: dict[str, str] = field(default_factory=dict)
    params: dict[str, str] = field(default_factory=dict)


def _checked(name: str, raw: str) -> str:
    value = raw.strip()
    if not _VALUE.match(value):
        raise PanelError(
            _("The %(name)s in this link is not valid (1-100 letters, digits, '_', '-', '.').")
            % {"name": name}
        )
    return value


def arrival_from(study: Study, params: Mapping[str, str]) -> Arrival:
    """The panel id and companions in a link's (or the welcome form's) parameters."""
    names = list(PANEL_IDS)
    if study.panel_param and study.panel_param not in PANEL_IDS:
        names.insert(0, study.panel_param)
    for name in names:
        if name not in params:
            continue
        recruitment_id = _checked(name, params[name])
        panel: dict[str, str] = {}
        for companion in PANEL_IDS.get(name, ()):
            if companion in params and params[companion].strip():
                panel[companion] = _checked(companion, params[companion])
        return Arrival(recruitment_id, panel, {name: recruitment_id, **panel})
    return Arrival()
