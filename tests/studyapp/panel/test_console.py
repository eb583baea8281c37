"""The console's Prolific page against the fake service: connecting (the token never comes
back in a page), the code mapping, the reconciliation, a too-short rejection refused with
nothing sent, the bulk approval recorded under the researcher's name."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.utils.html import escape

from recourse_engine import synth_pool
from studyapp.models import PanelAction, PanelConnection, Participant, Study
from studyapp.panel import codes
from tests.studyapp.conftest import SCHEMA, make_study
from tests.studyapp.console.conftest import client_for, researcher
from tests.studyapp.panel.conftest import TOKEN, FakeProlific


@pytest.fixture
def study(db: Any) -> Study:
    return make_study(slug="paneled", pool=synth_pool(SCHEMA, n=60, seed=1), state="draft")


def _owned(study: Study) -> Client:
    owner = researcher("owner")
    Study.objects.filter(pk=study.pk).update(owner=owner)
    return client_for(owner)


def test_the_page_connects_reconciles_and_acts(
    study: Study, fake: FakeProlific, settings: Any
) -> None:
    settings.STUDYAPP_PROLIFIC_URL = fake.url  # where a connection made in the console goes
    client = _owned(study)
    url = f"/console/studies/{study.slug}/prolific/"
    page = client.get(url).content.decode()
    assert 'id="not-connected"' in page
    mapping = page.split('id="code-mapping"', 1)[1].split("</table>", 1)[0]
    for outcome in ("completed", "screened_out", "failed_attention", "declined_consent"):
        rule = codes.BY_OUTCOME[outcome]
        assert (
            codes.outcomes.outcome_code(study, outcome) in mapping and escape(rule.gets) in mapping
        )

    psid = fake.study()
    bad = client.post(url, {"do": "connect", "token": "bad token", "panel_study_id": psid},
                      follow=True).content.decode()  # fmt: skip
    assert "Not done: the Prolific API token is malformed" in bad
    assert not PanelConnection.objects.exists()
    client.post(url, {"do": "connect", "token": TOKEN, "panel_study_id": psid})
    assert PanelConnection.objects.get(study=study).panel_study_id == psid

    pid = "d" * 24
    Participant.objects.create(study=study, recruitment_id=pid, state="completed")
    sub = fake.start(psid, pid)
    fake.complete(sub, codes.outcomes.outcome_code(study, "completed"))
    synced = client.get(url + "?sync=1").content.decode()
    assert TOKEN not in synced and TOKEN not in page
    assert "<strong>0 mismatch(es)</strong>; 1 agreeing submission(s) await review" in synced

    short = {"do": "reject", "submission_id": sub, "category": "LOW_EFFORT", "message": "z" * 40}
    said = client.post(url, short, follow=True).content.decode()
    assert "Not done" in said and "at least 100 characters" in said
    assert "transition" not in fake.counts()["received"]

    client.post(url, {"do": "approve_agreeing"})
    (row,) = PanelAction.objects.all()
    assert (row.kind, row.state, row.by, row.submission_ids) == ("approve", "sent", "owner", [sub])
    assert fake.counts()["approvals"] == {sub: 1}
    assert "Approve" in client.get(url).content.decode().split('id="ledger"', 1)[1]
