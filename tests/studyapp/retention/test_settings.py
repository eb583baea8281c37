"""The retention rules as study settings: validated with path-named one-line messages, stored
with the rules that have a period only (none by default: a study is unchanged), changeable
on a live study, explained where a combination may surprise; and the daily beat entry."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django_celery_beat.models import PeriodicTask
from django_celery_beat.schedulers import DatabaseScheduler

from studyapp.config.celery_app import app as celery_app
from studyapp.definition.errors import ConfigError
from studyapp.definition.json_schema import editor_schema
from studyapp.definition.retention import DATA_CLASSES, retention_notes, retention_of
from studyapp.models import Study
from studyapp.retention.tasks import apply_retention
from studyapp.studies import duplicate, text_checks, updates
from tests.studyapp.retention.conftest import set_rules

BAD = [
    ({"answers": {"days": -3}},
     "retention.answers.days: -3 days: a period is 0 to 36500 whole days (blank: no limit)"),
    ({"answers": {"days": 40_000}},
     "retention.answers.days: 40000 days: a period is 0 to 36500 whole days (blank: no limit)"),
    ({"answers": {"days": 1.5}}, "retention.answers.days: expected a whole number"),
    ({"e_mail": {"days": 3}}, "retention.e_mail: unknown field; expected one of: participant, "
     "answers, free_text, paradata, panel_id, contact"),
    ({"contact": {"days": 3, "after": "finish"}},
     "retention.contact.after: 'finish' is not one of 'completion' or 'study_close'"),
    ({"contact": {"days": 3, "from": "completion"}},
     "retention.contact.from: unknown field; expected one of: days, after"),
    (["contact"], "retention: expected an object"),
]  # fmt: skip


@pytest.mark.parametrize(("value", "message"), BAD)
def test_bad_rules_are_refused_by_path_and_nothing_changes(
    study: Study, value: Any, message: str
) -> None:
    set_rules(study, {"paradata": {"days": 7}})
    with pytest.raises(ConfigError) as e:
        set_rules(study, value)
    assert e.value.messages == [message]
    assert "\n" not in message
    assert Study.objects.get(pk=study.pk).retention == {
        "paradata": {"days": 7, "after": "completion"}
    }


def test_by_default_nothing_is_deleted(study: Study) -> None:
    assert study.retention == {} and updates.study_config(study)["retention"] == {}
    assert retention_of(study.retention).rules() == {}


def test_rules_are_stored_with_a_period_only_and_change_on_a_live_study(study: Study) -> None:
    assert study.state == Study.State.LIVE
    set_rules(study, {
        "contact": {"days": 0},
        "answers": {"days": 365, "after": "study_close"},
        "free_text": {"days": None, "after": "completion"},  # the editor's blank: no limit
    })  # fmt: skip
    stored = Study.objects.get(pk=study.pk).retention
    assert stored == {
        "answers": {"days": 365, "after": "study_close"},
        "contact": {"days": 0, "after": "completion"},
    }
    rules = retention_of(stored).rules()
    assert list(rules) == ["answers", "contact"]  # in deletion order
    assert rules["answers"].words() == "365 days after the study's close"
    copy = duplicate.study_duplicate(study=study, slug="kept-copy", owner=None)
    assert copy.retention == stored


def test_a_whole_participant_shorter_than_a_part_is_allowed_and_explained(
    study: Study,
) -> None:
    set_rules(study, {
        "participant": {"days": 30},
        "free_text": {"days": 90},
        "paradata": {"days": 10},
        "contact": {"days": 5, "after": "study_close"},
    })  # fmt: skip
    notes = retention_notes(retention_of(Study.objects.get(pk=study.pk).retention))
    assert notes == [
        "retention.free_text: 90 days after the participant's end, but the whole participant "
        "goes 30 days after the participant's end, taking the free-text answers with it 60 "
        "days earlier than this rule says",
        "retention.contact: 5 days after the study's close, the whole participant 30 days "
        "after the participant's end: whichever comes first deletes the contact address",
    ]
    assert set(notes) <= set(text_checks.study_warnings(Study.objects.get(pk=study.pk)))


def test_the_editor_offers_every_class_with_its_period_and_event() -> None:
    schema = editor_schema("retention")
    assert list(schema["properties"]) == list(DATA_CLASSES)
    rule = schema["properties"]["answers"]["properties"]
    assert rule["days"]["type"] == "integer"
    assert rule["after"]["enum"] == ["completion", "study_close"]


def test_beat_runs_the_retention_daily(transactional_db: Any) -> None:
    entry = settings.CELERY_BEAT_SCHEDULE["apply-retention"]
    assert entry == {"task": apply_retention.name, "schedule": 86400.0}
    assert apply_retention.name in celery_app.tasks
    scheduler = DatabaseScheduler(app=celery_app, lazy=False)
    assert "apply-retention" in scheduler.schedule
    row = PeriodicTask.objects.get(name="apply-retention")
    assert row.task == "studyapp.tasks.apply_retention"
    assert (row.interval.every, row.interval.period) in ((86400, "seconds"), (1, "days"))
    assert apply_retention.apply().get() == {}
