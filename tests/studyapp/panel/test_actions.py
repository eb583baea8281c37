"""Connecting and acting against the fake service: bad input is refused with a clear message
before anything is stored or sent; the token is kept encrypted; each action is recorded
with who and when and never sent twice; bonuses are set up from a rule over the export and
paid once; a delayed-release study's two sessions are reconciled and paid as such."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from recourse_engine import synth_pool
from studyapp.models import PanelAction, PanelConnection, Participant, Study
from studyapp.panel import actions, bonus, codes, secret, service
from studyapp.panel.errors import PanelError
from tests.studyapp.conftest import SCHEMA, make_study
from tests.studyapp.panel.conftest import TOKEN, FakeProlific

WHO = actions.Who(by="researcher@example.org")
LONG = (
    "Your answers to the evaluation pages were the same option on every item, and the check "
    "question was skipped; please message us if this is wrong."
)
T0 = datetime(2030, 1, 1, tzinfo=UTC)


@pytest.fixture
def study(db: Any) -> Study:
    return make_study(slug="paneled", pool=synth_pool(SCHEMA, n=60, seed=1), state="draft")


def person(study: Study, pid: str, state: str = "completed", **fields: Any) -> Participant:
    return Participant.objects.create(
        study=study, recruitment_id=pid, state=state, finished_at=T0, **fields
    )


def connected(study: Study, fake: FakeProlific, **kw: Any) -> str:
    psid = fake.study()
    service.panel_connect(study=study, token=TOKEN, panel_study_id=psid, api_url=fake.url, **kw)
    return psid


def nothing_sent(fake: FakeProlific) -> bool:
    return fake.counts()["received"] == {}


@pytest.mark.parametrize(
    "token, said",
    [("", "empty"), ("has spaces in it 0123456789", "malformed"), ("short", "malformed"),
     ('quote"0123456789abcdefghij', "malformed")],
)  # fmt: skip
def test_a_malformed_token_is_refused(
    study: Study, fake: FakeProlific, token: str, said: str
) -> None:
    with pytest.raises(PanelError, match=said) as err:
        service.panel_connect(
            study=study, token=token, panel_study_id=fake.study(), api_url=fake.url
        )
    assert token not in str(err.value) or not token
    assert not PanelConnection.objects.exists() and nothing_sent(fake)


def test_a_panel_study_that_does_not_exist_is_refused(study: Study, fake: FakeProlific) -> None:
    with pytest.raises(PanelError, match="Prolific has no study '0{22}ab' for this token"):
        service.panel_connect(
            study=study, token=TOKEN, panel_study_id="0" * 22 + "ab", api_url=fake.url
        )
    with pytest.raises(PanelError, match="'abc' is malformed: 24 hexadecimal"):
        service.panel_connect(study=study, token=TOKEN, panel_study_id="abc", api_url=fake.url)
    assert not PanelConnection.objects.exists()
    assert fake.counts()["received"] == {"study": 1}


def test_without_the_key_nothing_is_stored(study: Study, fake: FakeProlific, settings: Any) -> None:
    settings.STUDYAPP_PANEL_KEY = ""
    with pytest.raises(PanelError, match="STUDYAPP_PANEL_KEY is not set"):
        connected(study, fake)
    settings.STUDYAPP_PANEL_KEY = "not-a-key"
    with pytest.raises(PanelError, match="not a Fernet key"):
        connected(study, fake)
    assert not PanelConnection.objects.exists()


def test_the_token_is_kept_encrypted_and_never_shown(
    study: Study, fake: FakeProlific, settings: Any
) -> None:
    connected(study, fake)
    conn = PanelConnection.objects.get(study=study)
    assert TOKEN.encode() not in bytes(conn.token_encrypted)
    assert secret.decrypt(conn.token_encrypted) == TOKEN
    out = StringIO()
    call_command("panel", "codes", study.slug, stdout=out)
    call_command("panel", "sync", study.slug, stdout=out)
    call_command("panel", "actions", study.slug, stdout=out)
    assert TOKEN not in out.getvalue()
    settings.STUDYAPP_PANEL_KEY = secret.Fernet.generate_key().decode()  # the key changed
    with pytest.raises(PanelError, match="cannot be decrypted"):
        service.client_for(study)


def test_a_40_character_rejection_is_refused_before_sending(
    study: Study, fake: FakeProlific
) -> None:
    psid = connected(study, fake)
    sub = fake.start(psid, "b" * 24)
    fake.complete(sub, "")
    client = service.client_for(study)
    before = fake.counts()["received"]
    with pytest.raises(PanelError, match="has 40 character.*at least 100"):
        actions.reject(study, client, sub, "LOW_EFFORT", "x" * 40, WHO)
    with pytest.raises(PanelError, match="'LAZY' is not one of Prolific's"):
        actions.reject(study, client, sub, "lazy", LONG, WHO)
    with pytest.raises(CommandError, match="has 40 character"):
        call_command("panel", "reject", study.slug, sub, "--category", "LOW_EFFORT",
                     "--message", "y" * 40)  # fmt: skip
    assert fake.counts()["received"] == before and not PanelAction.objects.exists()

    row = actions.reject(study, client, sub, "LOW_EFFORT", LONG, WHO)
    assert row.state == "sent" and row.by == WHO.by and row.payload["message"] == LONG
    assert actions.reject(study, client, sub, "LOW_EFFORT", LONG, WHO).pk == row.pk
    assert fake.counts()["received"]["transition"] == 1
    assert fake.submissions()[sub]["status"] == "REJECTED"


def test_a_bonus_rule_that_names_no_column_is_refused(study: Study, fake: FakeProlific) -> None:
    connected(study, fake)
    person(study, "c" * 24)
    with pytest.raises(PanelError, match="names no column of the export: 'nosuch'"):
        bonus.bonus_rows(study, "0.50", ["nosuch=1"])
    with pytest.raises(PanelError, match="names no column: give --where"):
        bonus.bonus_rows(study, "0.50")
    with pytest.raises(PanelError, match="not a number"):
        bonus.bonus_rows(study, "lots", ["outcome=completed"])
    with pytest.raises(CommandError, match="names no column of the export: 'sessions'"):
        call_command("panel", "bonus", study.slug, "--amount", "1", "--per", "sessions")
    assert not PanelAction.objects.exists() and fake.counts()["received"] == {"study": 1}


def test_bonuses_are_set_up_then_paid_once(study: Study, fake: FakeProlific) -> None:
    psid = connected(study, fake)
    for pid, state in (("1" * 24, "completed"), ("2" * 24, "completed"), ("3" * 24, "withdrawn")):
        person(study, pid, state)
        fake.complete(fake.start(psid, pid), "")
    rows = bonus.bonus_rows(study, "0.75", ["outcome=completed"])
    assert sorted(rows) == [("1" * 24, "0.75"), ("2" * 24, "0.75")]
    client = service.client_for(study)
    setup = actions.bonus_setup(study, client, rows, WHO)
    assert setup.response["amount"] == 150  # cents, as Prolific answers
    assert setup.payload == {"study_id": psid, "participants": 2, "amount": "1.50"}
    assert "1" * 24 not in str(setup.payload)  # no panel id kept in the ledger
    assert actions.bonus_setup(study, client, rows, WHO).pk == setup.pk  # not set up twice
    paid = actions.bonus_pay(study, client, setup, WHO)
    assert paid.state == "sent"
    assert actions.bonus_pay(study, client, setup, WHO).pk == paid.pk
    counts = fake.counts()
    assert counts["received"]["bonus_setup"] == 1 and counts["payments"] == {
        setup.response["id"]: 1
    }


def test_a_payment_that_may_have_gone_through_is_not_sent_again(
    study: Study, fake: FakeProlific
) -> None:
    psid = connected(study, fake)
    person(study, "4" * 24)
    fake.complete(fake.start(psid, "4" * 24), "")
    client = service.client_for(study, backoff=0.01)
    setup = actions.bonus_setup(study, client, [("4" * 24, "1.00")], WHO)
    fake.faults("bonus_pay", {"status": 500})
    with pytest.raises(PanelError, match="may have acted"):
        actions.bonus_pay(study, client, setup, WHO)
    with pytest.raises(PanelError, match="may already have reached Prolific"):
        actions.bonus_pay(study, client, setup, WHO)
    assert fake.counts()["received"]["bonus_pay"] == 1


def test_the_two_sessions_of_a_delayed_study_are_reconciled_and_paid_as_such(
    study: Study, fake: FakeProlific
) -> None:
    Study.objects.filter(pk=study.pk).update(release_mode="delayed", release_after_days=7)
    study.refresh_from_db()
    first, second = fake.study(), fake.study()
    service.panel_connect(study=study, token=TOKEN, panel_study_id=first,
                          second_study_id=second, api_url=fake.url)  # fmt: skip
    service.panel_push_codes(study)
    both, once = "5" * 24, "6" * 24
    t = T0 + timedelta(days=8)
    person(study, both, submitted_at=T0, returned_at=t)
    person(study, once, "expired", submitted_at=T0)
    code = {o: codes.outcomes.outcome_code(study, o) for o in ("first_session", "completed")}
    subs = {pid: fake.start(first, pid) for pid in (both, once)}
    for sub in subs.values():
        fake.complete(sub, code["first_session"])
    later = fake.start(second, both)
    fake.complete(later, code["completed"])

    rec = service.panel_sync(study)
    assert rec.mismatches == []
    assert sorted(rec.to_approve) == sorted([(1, subs[both]), (1, subs[once]), (2, later)])
    out = StringIO()
    call_command("panel", "approve", study.slug, "--agreeing", stdout=out)
    assert fake.counts()["approvals"] == {subs[both]: 1, subs[once]: 1, later: 1}
    by_study = {a.panel_study_id: a.submission_ids for a in PanelAction.objects.all()}
    assert by_study == {first: sorted([subs[both], subs[once]]), second: [later]}
    # one Prolific study only: the second session is paid as a bonus per completed session
    assert bonus.bonus_rows(study, "2.00", per="second_session_completed") == [(both, "2.00")]
