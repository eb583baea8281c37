"""A study run through Prolific end to end against the fake service: 50 bots arrive with
their Prolific ids, walk the real pages, and return to Prolific with the code they were
shown; sync then finds nothing out of step, the screened-out ones are screened out on
Prolific, and the approval in bulk — through a 429 and a 500 — reaches Prolific exactly once."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command

from studyapp.models import PanelAction, Participant, Study
from studyapp.panel import actions, codes, service
from studyapp.simulation.bots import Bot
from tests.studyapp.panel.conftest import TOKEN, FakeProlific

N_BOTS = 50
#: every tenth bot fails the screening
SCREENED = {i for i in range(N_BOTS) if i % 10 == 9}
WHO = actions.Who(by="test")


def connect(study: Study, fake: FakeProlific) -> str:
    psid = fake.study()
    service.panel_connect(study=study, token=TOKEN, panel_study_id=psid, api_url=fake.url)
    service.panel_push_codes(study)  # the study's codes, with their actions, on Prolific
    return psid


def arrive(study: Study, fake: FakeProlific, psid: str, i: int, **bot: Any) -> tuple[str, Any]:
    """One participant: Prolific starts a submission, the bot walks the study from the
    study link Prolific gives, and returns to Prolific with the code it was shown."""
    pid = f"{i:024x}"
    sub = fake.start(psid, pid)
    query = f"?PROLIFIC_PID={pid}&STUDY_ID={psid}&SESSION_ID={sub}"
    result = Bot(study, seed=i, test=False, query=query, **bot).run()
    fake.complete(sub, result.completion_code)
    return sub, result


@pytest.mark.slow
def test_fifty_bots_are_in_step_with_prolific(
    study: Study, fake: FakeProlific, eager: None
) -> None:
    psid = connect(study, fake)
    on_prolific = fake.counts()["studies"][psid]["completion_codes"]
    assert {c["code"] for c in on_prolific} == {r["code"] for r in codes.study_codes(study)}
    subs = {}
    for i in range(N_BOTS):
        subs[i] = arrive(study, fake, psid, i, eligible=i not in SCREENED)

    rec = service.panel_sync(study)
    assert rec.submissions == N_BOTS and rec.participants == N_BOTS
    assert rec.mismatches == []
    states = fake.submissions()
    for i in SCREENED:
        sub, result = subs[i]
        assert result.outcome == "screened_out"
        assert states[sub]["status"] == codes.SCREENED_OUT
    rewarded = {sub for i, (sub, r) in subs.items() if i not in SCREENED}
    assert {sid for _, sid in rec.to_approve} == rewarded

    # the approval in bulk meets a 429 (Retry-After 1) and then a 500, and goes through once
    fake.faults("bulk_approve", {"status": 429, "retry_after": 1}, {"status": 500})
    client = service.client_for(study, backoff=0.05)
    row = actions.approve(study, client, [sid for _, sid in rec.to_approve], WHO)
    assert row is not None and row.state == PanelAction.State.SENT and row.attempts == 3
    assert row.by == "test" and row.sent_at is not None
    counts = fake.counts()
    assert counts["received"]["bulk_approve"] == 3
    assert counts["approvals"] == {sid: 1 for sid in rewarded}

    # asked again (a double click, a rerun): nothing is sent
    assert actions.approve(study, client, sorted(rewarded), WHO) is None
    assert fake.counts()["received"]["bulk_approve"] == 3
    again = service.panel_sync(study)
    assert again.mismatches == [] and again.to_approve == []


def test_a_screen_out_without_a_code_is_listed_and_screened_out(
    study: Study, fake: FakeProlific, eager: None
) -> None:
    psid = connect(study, fake)
    pid = "a" * 24
    sub = fake.start(psid, pid)
    Bot(study, seed=1, eligible=False, test=False, query=f"?PROLIFIC_PID={pid}").run()
    fake.complete(sub, "")  # the participant submitted on Prolific without the code
    assert Participant.objects.get(recruitment_id=pid).state == "screened_out"

    (m,) = service.panel_sync(study).mismatches
    assert (m.kind, m.submission_id, m.action) == ("NOCODE", sub, "screen_out")
    (row,) = actions.screen_out(study, service.client_for(study), [m.submission_id], WHO)
    assert row.state == PanelAction.State.SENT
    assert fake.submissions()[sub]["status"] == codes.SCREENED_OUT
    assert service.panel_sync(study).mismatches == []


def test_each_kind_of_mismatch_is_listed_with_its_action(
    study: Study, fake: FakeProlific, eager: None
) -> None:
    psid = connect(study, fake)
    stranger = fake.start(psid, "f" * 24)  # took part on Prolific, never here
    fake.complete(stranger, "")
    done, _ = arrive(study, fake, psid, 1)
    fake.set_status(done, codes.TIMED_OUT)
    gone, _ = arrive(study, fake, psid, 2)
    fake.set_status(gone, codes.RETURNED)
    Bot(study, seed=3, test=False, query=f"?PROLIFIC_PID={3:024x}").run()  # no submission
    found = {m.kind: m for m in service.panel_sync(study).mismatches}
    assert set(found) == {"no participant", "timed out", "returned", "no submission"}
    assert found["no participant"].action == "request_return"
    assert found["timed out"].action == "bonus"
    assert found["no submission"].submission_id == ""
    out = StringIO()
    call_command("panel", "sync", study.slug, stdout=out)
    said = out.getvalue()
    assert "4 mismatch(es)" in said
    assert f"[timed out] {done} " in said and "-> pay the reward as a bonus" in said
    assert f"[no participant] {stranger} " in said and "-> ask to return" in said
