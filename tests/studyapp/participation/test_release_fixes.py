"""Delayed release, as a panel and a participant meet it: a code (and return link) for the first
session, e-mail times in the study's time zone from the configured sender, a dry run of the
schedule that changes nothing, and the monitor's counts agreeing with the participant table."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.core import mail
from django.core.management import call_command
from django.test import Client, override_settings

from studyapp.models import Participant, Study
from studyapp.participation import release
from studyapp.studies import monitor, services, updates
from tests.studyapp.conftest import PROFILE, Walker, make_study, start

S = Participant.State
SCHEDULE = {"release_mode": "delayed", "release_after_days": 2, "return_deadline_days": 3,
            "reminder_every_days": 1, "time_zone": "Asia/Tokyo"}  # fmt: skip
CHECK = {"key": "blue", "prompt": "Choose 'Blue'.", "options": ["Red", "Blue"], "answer": 2,
         "page": "profile"}  # fmt: skip


@pytest.fixture
def delayed(transactional_db: None, eager: None) -> Study:
    study = make_study(slug="delayed", state="draft")
    url = "https://panel.example/ok?c={code}"
    codes = {"first_session": {"code": "FIRST1", "redirect_url": url}}
    study = updates.study_update(
        study=study,
        changes={**SCHEDULE, "outcome_codes": codes, "attention_checks": [CHECK]},
    )
    return services.study_set_state(study=study, state=Study.State.LIVE)


def _submitted(study: Study, blue: str = "2") -> Walker:
    walker = start(Client(), study)
    walker.to_profile()
    assert walker.submit_profile({**PROFILE, "attention__blue": blue}).status_code == 302
    return walker


def test_the_first_session_ends_with_its_own_code_and_return_link(delayed: Study) -> None:
    walker = _submitted(delayed)
    body = walker.get().content.decode()
    assert walker.page() == "under_review"
    assert '<strong id="first-session-code">FIRST1</strong>' in body
    assert 'href="https://panel.example/ok?c=FIRST1"' in body
    assert delayed.outcome_codes["first_session"]["code"] != delayed.outcome_codes[
        "completed"]["code"]  # fmt: skip
    # the expected release in the study's time zone, with its offset
    due = walker.participant.release_due_at.astimezone(release.ZoneInfo("Asia/Tokyo"))
    assert f"{due:%Y-%m-%d %H:%M} (Asia/Tokyo, UTC+09:00)" in body


@override_settings(STUDY_EMAIL_FROM="Loan study team <team@lab.example>")
def test_e_mails_give_times_in_the_studys_zone_from_the_configured_sender(delayed: Study) -> None:
    walker = _submitted(delayed)
    walker.post({"page": "under_review", "email": "p@example.org"})
    p = walker.participant
    release.tick(now=p.release_due_at)
    notice = mail.outbox[-1]
    assert notice.from_email == "Loan study team <team@lab.example>"
    p.refresh_from_db()
    local = p.return_deadline_at.astimezone(release.ZoneInfo("Asia/Tokyo"))
    assert f"Please open it before {local:%Y-%m-%d %H:%M} (Asia/Tokyo, UTC+09:00)." in notice.body
    assert "(UTC)" not in notice.body
    winter = datetime(2030, 1, 15, 12, 0, tzinfo=UTC)
    berlin = Study(time_zone="Europe/Berlin")
    assert release.local_time(berlin, winter) == "2030-01-15 13:00 (Europe/Berlin, UTC+01:00)"
    assert release.local_time(berlin, winter.replace(month=7)).endswith("UTC+02:00)")


def _table(study: Study) -> dict[str, Any]:
    return {
        p.pk: (p.state, p.released_at, p.return_deadline_at, p.reminders_sent, p.contact_email)
        for p in Participant.objects.filter(study=study)
    }


def test_the_dry_run_lists_what_it_would_do_and_changes_nothing(delayed: Study) -> None:
    walkers = [_submitted(delayed) for _ in range(2)]
    walkers[0].post({"page": "under_review", "email": "p@example.org"})
    at = walkers[1].participant.release_due_at + timedelta(minutes=1)
    before, sent = _table(delayed), len(mail.outbox)
    out = io.StringIO()
    call_command("release_due", "--dry-run", "--now", at.isoformat(), stdout=out)
    ids = sorted(w.participant.pk for w in walkers)
    assert f"would release: 2 ({ids[0]}, {ids[1]})" in out.getvalue()
    assert "nothing is changed or sent" in out.getvalue()
    assert _table(delayed) == before and len(mail.outbox) == sent
    # the same run for real does what the dry run listed
    assert release.tick_preview(now=at) == release.tick(now=at)
    assert {pk: row[1] for pk, row in _table(delayed).items()} == {pk: at for pk in ids}
    later = at + timedelta(days=1)
    preview = release.tick_preview(now=later)
    assert preview["reminded"] == [walkers[0].participant.pk]
    assert preview == release.tick(now=later)


def test_the_monitor_counts_agree_with_the_participant_table(delayed: Study) -> None:
    held = _submitted(delayed)
    failed = _submitted(delayed, blue="1")  # failed the attention check: waits for nothing
    assert failed.participant.state == S.FAILED_ATTENTION
    assert failed.participant.submitted_at is not None
    released = _submitted(delayed)
    due = released.participant.release_due_at
    release.tick(now=due)  # releases everyone submitted so far who is held
    late = _submitted(delayed)
    counts = monitor.study_monitor(delayed)["release"]
    table: dict[str, int] = {"waiting": 0, "released": 0, "returned": 0, "expired": 0}
    for p in Participant.objects.filter(study=delayed, is_test=False):
        if p.state == S.EXPIRED:
            table["expired"] += 1
        elif p.returned_at is not None:
            table["returned"] += 1
        elif p.released_at is not None and p.state in (S.EVALUATING, S.NO_RECOURSE):
            table["released"] += 1
        elif p.released_at is None and release.is_held(p):
            table["waiting"] += 1
    assert counts == table == {"waiting": 1, "released": 2, "returned": 0, "expired": 0}
    assert late.participant.pk != held.participant.pk
