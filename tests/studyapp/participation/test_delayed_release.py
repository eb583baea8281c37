"""Delayed release through the real pages, the schedule run with a controlled clock."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest
from django.core import mail
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from studyapp.definition.errors import ConfigError
from studyapp.export import tables
from studyapp.models import Participant, Study
from studyapp.participation import release
from studyapp.studies import carloan, duplicate, monitor, pool_collection, updates
from tests.studyapp.conftest import Walker, make_study, start

S = Participant.State
#: a whole schedule: the settings a change leaves out keep their defaults
SCHEDULE = {
    "release_mode": "immediate", "release_at": None, "release_after_days": None,
    "reminder_every_days": 0, "max_reminders": 2, "return_deadline_days": 14,
}  # fmt: skip
DAYS = {
    "release_mode": "delayed", "release_after_days": 14, "reminder_every_days": 3,
    "return_deadline_days": 7,
}  # fmt: skip


def _schedule(study: Study, **settings: object) -> Study:
    return updates.study_update(study=study, changes={**SCHEDULE, **settings})


@pytest.fixture
def delayed(transactional_db: None, eager: None) -> Study:
    return _schedule(make_study(slug="delayed"), **DAYS)


def _submitted(study: Study) -> Walker:
    walker = start(Client(), study)
    walker.to_profile()
    assert walker.submit_profile().status_code == 302
    return walker


def test_submit_release_return_complete(delayed: Study) -> None:
    walker = _submitted(delayed)
    p = walker.participant
    assert p.state == S.EVALUATING and p.recourses.count() == 5  # computed at once
    assert walker.page() == "under_review"  # ... but held
    assert p.release_due_at == p.submitted_at + timedelta(days=14)
    # the participant leaves an address: the link goes out at once
    r = walker.post({"page": "under_review", "email": "p@example.org"})
    assert r.status_code == 302 and len(mail.outbox) == 1
    assert walker.url in mail.outbox[0].body and mail.outbox[0].to == ["p@example.org"]
    # one address, one mail: a second one is refused and nothing is sent
    r = walker.post({"page": "under_review", "email": "other@example.org"}, follow=True)
    assert "We already sent your link to p@example.org" in r.content.decode()
    assert walker.participant.contact_email == "p@example.org" and len(mail.outbox) == 1

    # a day early: nothing happens; on time: released, with a notice
    assert release.tick(now=p.release_due_at - timedelta(days=1))["released"] == []
    assert walker.page() == "under_review"
    due = p.release_due_at
    assert release.tick(now=due)["released"] == [p.pk]
    assert len(mail.outbox) == 2 and "ready" in mail.outbox[1].subject
    p.refresh_from_db()
    assert p.released_at == due and p.return_deadline_at == due + timedelta(days=7)
    assert release.tick(now=due)["released"] == []  # once only
    # reminders every 3 days until they return, never more often
    assert release.tick(now=due + timedelta(days=2))["reminded"] == []
    assert release.tick(now=due + timedelta(days=3))["reminded"] == [p.pk]
    assert release.tick(now=due + timedelta(days=4))["reminded"] == []
    assert len(mail.outbox) == 3
    assert monitor.study_monitor(delayed)["release"] == {
        "waiting": 0, "released": 1, "returned": 0, "expired": 0
    }  # fmt: skip

    # the second session starts at the report, then the evaluations
    assert walker.page() == "report"
    assert walker.post({"page": "report"}).status_code == 302
    assert walker.participant.returned_at is not None
    for _ in range(5):
        walker.get()
        assert walker.post(walker.evaluation_data()).status_code == 302
    p = walker.participant
    assert p.state == S.COMPLETED and p.contact_email == "p@example.org"
    assert release.tick(now=due + timedelta(days=5))["forgotten"] == [p.pk]
    p = walker.participant
    assert p.contact_email == "" and len(mail.outbox) == 3  # no reminder once back
    assert p.completion_code == delayed.outcome_codes["completed"]["code"]
    row = tables.participants_frame(delayed).iloc[0]
    assert pd.Timestamp(row["released_at"]) == pd.Timestamp(due)
    assert pd.Timestamp(row["submitted_at"]) == pd.Timestamp(p.submitted_at)
    assert row["submitted_at"] and row["returned_at"]
    assert monitor.study_monitor(delayed)["release"]["returned"] == 1


def test_the_deadline_closes_the_second_session(delayed: Study) -> None:
    walker = _submitted(delayed)
    due = walker.participant.release_due_at
    release.tick(now=due)
    assert walker.page() == "report"
    assert release.tick(now=due + timedelta(days=7) - timedelta(seconds=1))["expired"] == []
    assert release.tick(now=due + timedelta(days=7))["expired"] == [walker.participant.pk]
    p = walker.participant
    assert p.state == S.EXPIRED
    assert p.completion_code == delayed.outcome_codes["expired"]["code"]
    assert p.completion_code != delayed.outcome_codes["completed"]["code"]
    assert p.completion_code in walker.get().content.decode()
    assert tables.participants_frame(delayed).iloc[0]["outcome"] == "expired"
    assert monitor.study_monitor(delayed)["release"]["expired"] == 1


def test_a_fixed_date_releases_everyone_submitted_before_it(delayed: Study) -> None:
    at = timezone.now() + timedelta(days=10)
    _schedule(delayed, release_mode="delayed", release_at=at)
    first, second = _submitted(delayed), _submitted(delayed)
    assert first.participant.release_due_at == at == second.participant.release_due_at
    assert monitor.study_monitor(delayed)["release"]["waiting"] == 2
    assert sorted(release.tick(now=at)["released"]) == sorted(
        [first.participant.pk, second.participant.pk]
    )


def test_a_release_date_in_the_past_is_refused_and_nothing_changes(delayed: Study) -> None:
    before = Study.objects.values().get(pk=delayed.pk)
    past = (timezone.now() - timedelta(hours=1)).replace(second=0, microsecond=0)
    with pytest.raises(ConfigError, match=f"release date {past:%Y-%m-%d %H:%M} is in the past"):
        _schedule(delayed, release_mode="delayed", release_at=past)
    assert Study.objects.values().get(pk=delayed.pk) == before


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"release_mode": "delayed"}, "release_at"),
        (
            {
                "release_mode": "delayed",
                "release_at": datetime(2099, 1, 1, tzinfo=UTC),
                "release_after_days": 3,
            },
            "release_after_days",
        ),
        ({"release_mode": "delayed", "release_after_days": 3, "return_deadline_days": 0}, "return_deadline_days"),
        ({"release_mode": "delayed", "release_after_days": 3, "reminder_every_days": 20}, "reminder_every_days"),
        ({"release_mode": "delayed", "release_at": datetime(2099, 1, 1)}, "release_at"),  # no zone
        ({"release_mode": "later"}, "release_mode"),
    ],
)  # fmt: skip
def test_bad_schedules_are_refused(delayed: Study, settings: dict[str, object], field: str) -> None:
    before = Study.objects.values().get(pk=delayed.pk)
    with pytest.raises(ConfigError) as err:
        _schedule(delayed, **settings)
    assert field in err.value.by_field()
    assert Study.objects.values().get(pk=delayed.pk) == before


def test_a_pool_collection_study_cannot_be_delayed(transactional_db: None) -> None:
    survey = pool_collection.pool_collection_study_create(
        slug="survey", title="Survey", schema=carloan.carloan_schema_dict()
    )
    before = Study.objects.values().get(pk=survey.pk)
    with pytest.raises(ConfigError, match="release_mode: only a recourse study can release"):
        _schedule(survey, **DAYS)
    assert Study.objects.values().get(pk=survey.pk) == before


def test_a_bad_address_is_refused_and_nothing_stored(delayed: Study) -> None:
    walker = _submitted(delayed)
    r = walker.post({"page": "under_review", "email": "not an address"})
    assert r.status_code == 400
    assert walker.participant.contact_email == "" and len(mail.outbox) == 0


def test_an_immediate_study_is_untouched(transactional_db: None, eager: None) -> None:
    study = make_study(slug="immediate")
    walker = _submitted(study)
    assert walker.page() == "evaluation-1"
    assert walker.participant.release_due_at is None
    assert release.tick(now=timezone.now() + timedelta(days=400)) == {
        "released": [], "reminded": [], "expired": [], "forgotten": []
    }  # fmt: skip
    assert monitor.study_monitor(study)["release"] is None


@pytest.mark.parametrize(
    ("now", "message"),
    [("next week", "not an ISO 8601 time"), ("2099-01-01T00:00:00", "has no time zone")],
)
def test_release_due_refuses_a_bad_time_and_releases_nothing(
    delayed: Study, now: str, message: str
) -> None:
    walker = _submitted(delayed)
    with pytest.raises(CommandError, match=message):
        call_command("release_due", "--now", now)
    assert walker.participant.released_at is None


def test_release_due_runs_the_schedule_as_at_a_given_time(delayed: Study) -> None:
    walker = _submitted(delayed)
    out = io.StringIO()
    due = walker.participant.release_due_at
    call_command("release_due", "--now", due.isoformat(), stdout=out)
    assert f"released: 1 ({walker.participant.pk})" in out.getvalue().splitlines()
    assert walker.participant.released_at == due


def test_a_copy_keeps_the_schedule_but_not_a_passed_date(delayed: Study) -> None:
    copy = duplicate.study_duplicate(study=delayed, slug="copy", owner=None)
    assert (copy.release_mode, copy.release_after_days, copy.return_deadline_days) == (
        "delayed", 14, 7
    )  # fmt: skip
    Study.objects.filter(pk=delayed.pk).update(
        release_after_days=None, release_at=timezone.now() - timedelta(days=1)
    )
    delayed.refresh_from_db()
    late = duplicate.study_duplicate(study=delayed, slug="late", owner=None)
    assert (late.release_mode, late.release_at) == ("immediate", None)
    assert "expired" in late.outcome_codes


def test_the_pages_speak_the_studys_language_and_texts(delayed: Study) -> None:
    Study.objects.filter(pk=delayed.pk).update(language="ja", texts={})
    delayed.refresh_from_db()
    walker = _submitted(delayed)
    assert "あなたの申込みは審査中です" in walker.get().content.decode()  # the default, in ja
    Study.objects.filter(pk=delayed.pk).update(state=Study.State.DRAFT)
    texts = {"ja": {"under_review": "審査には2週間かかります。", "released": "結果が出ました。"}}
    updates.study_update(study=delayed, changes={"texts": texts})
    assert "審査には2週間かかります。" in walker.get().content.decode()
    release.tick(now=walker.participant.release_due_at)
    body = walker.get().content.decode()
    assert "結果が出ました。" in body and "プランを見る" in body


def test_a_stale_under_review_form_after_the_release_is_told_so(delayed: Study) -> None:
    walker = _submitted(delayed)
    release.tick(now=walker.participant.release_due_at)
    r = walker.post({"page": "under_review", "email": "late@example.org"}, follow=True)
    assert "That page was already submitted" in r.content.decode()
    assert walker.participant.contact_email == "" and len(mail.outbox) == 0
    r = walker.post({"page": "evaluation-1"}, follow=True)  # not open before the report
    assert "That page is not open yet" in r.content.decode()


def test_those_still_waiting_follow_a_changed_schedule(delayed: Study) -> None:
    waiting, released = _submitted(delayed), _submitted(delayed)
    release.tick(now=released.participant.release_due_at)  # both due then: both released
    later = _submitted(delayed)
    at = timezone.now() + timedelta(days=30)
    _schedule(delayed, release_mode="delayed", release_at=at)
    assert later.participant.release_due_at == at
    assert waiting.participant.released_at is not None  # released ones stay released
    _schedule(delayed, release_mode="delayed", release_after_days=2)
    p = later.participant
    assert p.release_due_at == p.submitted_at + timedelta(days=2)
