"""The study's data-protection page in the console: its rules in words, what is due, the
receipts and their CSV download; applying the due deletions names the researcher; other
researchers' studies stay hidden; the rules are set on the study's change page."""

from __future__ import annotations

import io
import json

import pandas as pd
from django.test import Client
from django.utils import timezone

from studyapp.models import DeletionReceipt, Participant, Study
from studyapp.retention.receipts import receipts_frame
from tests.studyapp.console.conftest import change_data, change_url, client_for, researcher
from tests.studyapp.retention.conftest import person, set_rules


def _owned(study: Study) -> tuple[Client, object]:
    owner = researcher("owner")
    Study.objects.filter(pk=study.pk).update(owner=owner)
    return client_for(owner), owner


def test_the_page_shows_rules_due_data_and_receipts(study: Study) -> None:
    client, owner = _owned(study)
    set_rules(study, {"contact": {"days": 0}, "answers": {"days": 30, "after": "study_close"}})
    ended = person(study, 1, timezone.now())
    person(study, 2, None)
    url = f"/console/studies/{study.slug}/data-protection/"
    page = client.get(url).content.decode()
    assert "0 days after the participant&#x27;s end" in page
    assert "30 days after the study&#x27;s close" in page
    assert 'id="no-receipts"' in page
    due = page.split('id="retention-due"', 1)[1].split("</table>", 1)[0]
    assert '<td class="n">1</td>' in due and '<td class="n">0</td>' in due  # contact, answers

    r = client.post(url)
    assert r.status_code == 302
    receipt = DeletionReceipt.objects.get()
    assert (receipt.data_class, receipt.by, receipt.by_user) == ("contact", "researcher", owner)
    assert Participant.objects.get(pk=ended.pk).contact_email == ""
    page = client.get(url).content.decode()
    assert 'id="deletion-receipts"' in page and "Deletion receipts (1)" in page

    csv = client.get(f"/console/studies/{study.slug}/deletion-receipts.csv")
    assert csv["Content-Type"].startswith("text/csv")
    got = pd.read_csv(io.StringIO(csv.content.decode()), keep_default_na=False)
    assert got.astype(str).to_dict("records") == receipts_frame(study).astype(str).to_dict(
        "records"
    )
    assert got.loc[0, "by_user"] == "owner" and got.loc[0, "rows"] == 1


def test_other_researchers_see_no_such_study(study: Study) -> None:
    _owned(study)
    other = client_for(researcher("other"))
    assert other.get(f"/console/studies/{study.slug}/data-protection/").status_code == 404
    assert other.get(f"/console/studies/{study.slug}/deletion-receipts.csv").status_code == 404
    assert other.post(f"/console/studies/{study.slug}/data-protection/").status_code == 404


def test_the_rules_are_set_on_the_change_page(study: Study) -> None:
    client, _ = _owned(study)
    page = client.get(change_url(study)).content.decode()
    assert 'id="data-protection-link"' in page and 'name="retention"' in page
    rules = {"paradata": {"days": 14, "after": "completion"}}
    r = client.post(change_url(study), change_data(study, retention=json.dumps(rules)))
    assert r.status_code == 302, r.content.decode()[:2000]
    assert Study.objects.get(pk=study.pk).retention == rules
