"""The monitor's integrity section: counts per signal and the flagged participants."""

from __future__ import annotations

import re
from typing import Any

from studyapp.models import Study
from tests.studyapp.console.conftest import client_for, researcher
from tests.studyapp.integrity.conftest import integrity_study
from tests.studyapp.integrity.test_export import _one_plan


def test_the_monitor_lists_a_participant_who_pasted(transactional_db: Any, eager: None):
    owner = researcher("owner")
    study = integrity_study()
    Study.objects.filter(pk=study.pk).update(owner=owner)
    pid = _one_plan(study)
    html = client_for(owner).get(f"/console/studies/{study.slug}/monitor/").content.decode()
    assert 'id="integrity-counts"' in html
    counts = dict(re.findall(r'data-signal="(\w+)">(\d+)<', html))
    assert counts == {"speeding": "0", "pasted": "1", "identical_text": "0", "straightlining": "0"}
    flagged = html.split('id="integrity-flagged"', 1)[1].split("</table>", 1)[0]
    assert f">P{pid}</a>" in flagged and "<td>pasted</td>" in flagged
