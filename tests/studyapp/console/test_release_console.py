"""The console's study kind and delayed-release settings, and the page that makes a
pool-collection study's answers another study's pool (preview, then confirm)."""

from __future__ import annotations

import io
import re
from datetime import timedelta
from typing import Any

from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from studyapp.models import Participant, Study
from studyapp.studies import carloan, pool_collection, services, updates
from tests.studyapp.conftest import start
from tests.studyapp.console.conftest import change_data, change_url


def _row(study: Study) -> dict[str, Any]:
    return Study.objects.values().get(pk=study.pk)


def test_a_delayed_release_is_set_in_the_console(draft: Study, owner_client: Client) -> None:
    data = change_data(draft, release_mode="delayed", release_after_days="14")
    data.update(return_deadline_days="10", reminder_every_days="3")
    r = owner_client.post(change_url(draft), data)
    assert r.status_code == 302, r.content.decode()[:2000]
    draft.refresh_from_db()
    assert (draft.release_mode, draft.release_after_days, draft.return_deadline_days) == (
        "delayed", 14, 10
    )  # fmt: skip
    assert draft.reminder_every_days == 3


def test_a_release_date_in_the_past_is_refused(draft: Study, owner_client: Client) -> None:
    before = _row(draft)
    past = timezone.now() - timedelta(days=2)
    data = change_data(draft, release_mode="delayed")
    data.update(release_at_0=past.strftime("%Y-%m-%d"), release_at_1="09:00:00")
    r = owner_client.post(change_url(draft), data)
    assert r.status_code == 200
    assert "is in the past" in r.content.decode() and "choose a future date" in r.content.decode()
    assert _row(draft) == before


def test_pool_collection_without_an_income_answer_to_hide_is_refused(
    draft: Study, owner_client: Client
) -> None:
    before = _row(draft)
    r = owner_client.post(change_url(draft), change_data(draft, kind="pool_collection"))
    assert r.status_code == 200
    assert "prefer not to say" in r.content.decode()
    assert _row(draft) == before


def test_pool_from_a_collection_study_preview_then_confirm(
    draft: Study, owner: Any, owner_client: Client
) -> None:
    survey = pool_collection.pool_collection_study_create(
        slug="survey", title="Survey", schema=carloan.carloan_schema_dict(), owner=owner
    )
    services.study_set_state(study=survey, state=Study.State.LIVE)
    call_command(
        "simulate_participants", "survey", "--n", "12", "--seed", "2", stdout=io.StringIO()
    )
    hidden = Participant.objects.filter(study=survey, income_jpy__isnull=True).count()
    before = _row(draft)
    url = f"/admin/studyapp/study/{draft.pk}/pool-from-collection/"
    assert 'value="survey"' in owner_client.get(url).content.decode()
    r = owner_client.post(url, {"source": "survey", "with_test": "1", "_preview": "Preview"})
    body = r.content.decode()
    assert r.status_code == 200 and 'id="collection-confirm"' in body
    assert f'id="count-not-disclosed">{hidden}<' in body
    assert f'id="count-included">{12 - hidden}<' in body
    assert _row(draft) == before  # the preview stores nothing
    sha = re.search(r'name="sha256" value="([0-9a-f]{64})"', body).group(1)
    # a tampered confirmation changes nothing
    r = owner_client.post(
        url, {"source": "survey", "with_test": "1", "sha256": "x", "confirm": "1"}
    )
    assert r.status_code == 200 and _row(draft) == before
    r = owner_client.post(
        url, {"source": "survey", "with_test": "1", "sha256": sha, "confirm": "1"}
    )
    assert r.status_code == 302
    draft.refresh_from_db()
    assert draft.pool_rows == 12 - hidden and draft.pool_csv.count("survey-") == 12 - hidden


def test_setup_makes_a_pool_collection_survey(owner: Any, owner_client: Client) -> None:
    r = owner_client.post(
        "/admin/studyapp/study/add/",
        {"slug": "survey", "title": "Survey", "language": "ja", "schema_source": "builtin",
         "pool_size": "10", "seed": "0", "pool_collection": "on"},
    )  # fmt: skip
    study = Study.objects.get(slug="survey")
    assert r.status_code == 302 and study.kind == "pool_collection" and study.owner == owner
    income = next(q for q in study.schema["screening"] if q["key"] == "income")
    assert len(income["options"]) == 21 and income["undisclosed"] == 21
    ja = study.schema["translations"]["ja"]["screening"]["income"]["options"]
    assert len(ja) == 21 and ja[-1] == "回答しない"


def test_the_monitor_page_shows_the_release_counts(
    draft: Study, owner_client: Client, eager: None
) -> None:
    updates.study_update(study=draft, changes={"release_mode": "delayed", "release_after_days": 3})
    services.study_set_state(study=draft, state=Study.State.LIVE)
    walker = start(Client(), draft)
    walker.to_profile()
    walker.submit_profile()
    body = owner_client.get(f"/console/studies/{draft.slug}/monitor/").content.decode()
    assert 'data-fig="release.waiting">1<' in body and 'data-fig="release.expired">0<' in body
