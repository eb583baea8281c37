"""Access codes stay out of the admin; a participant's resume link is given back only by
the "copy resume link" action, for one participant, once, and logged (LogEntry and the
studyapp.console.resume_link logger) with who asked, when and the support request."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth.models import Permission
from django.test import Client

from studyapp.models import Participant, Study
from tests.studyapp.conftest import make_study
from tests.studyapp.console.conftest import client_for, researcher

CHANGELIST = "/admin/studyapp/participant/"


@pytest.fixture
def study(db: Any) -> Study:
    return make_study(slug="loans")


@pytest.fixture
def people(study: Study) -> list[Participant]:
    return [
        Participant.objects.create(study=study, recruitment_id=f"PID-{i}", condition="a")
        for i in range(3)
    ]


@pytest.fixture
def owner(study: Study) -> Any:
    user = researcher("owner")
    Study.objects.filter(pk=study.pk).update(owner=user)
    return user


def _act(client: Client, people: list[Participant], **extra: str) -> Any:
    data = {"action": "copy_resume_link", "_selected_action": [p.pk for p in people], **extra}
    return client.post(CHANGELIST, data)


def test_no_admin_page_shows_an_access_code(owner: Any, people: list[Participant]) -> None:
    client = client_for(owner)
    pages = [
        CHANGELIST,
        f"{CHANGELIST}?q=PID",
        f"{CHANGELIST}{people[0].pk}/change/",
        f"{CHANGELIST}{people[0].pk}/history/",
    ]
    for url in pages:
        r = client.get(url)
        html = r.content.decode()
        assert r.status_code == 200, url
        for p in people:
            assert p.code not in html, url
    assert client.get(f"{CHANGELIST}?q=PID").context["cl"].result_count == len(people)
    # searching by an access code finds nobody
    found = client.get(f"{CHANGELIST}?q={people[0].code}").context["cl"].result_count
    assert found == 0


def test_resume_link_is_shown_once_and_logged(
    owner: Any, people: list[Participant], caplog: Any
) -> None:
    client = client_for(owner)
    target = people[1]
    # first the request is asked for; nothing is shown or logged yet
    r = _act(client, [target])
    assert r.status_code == 200 and target.code not in r.content.decode()
    assert 'name="request"' in r.content.decode()
    # an empty request is refused with a message, still nothing shown
    r = _act(client, [target], confirm="yes", request="  ")
    assert target.code not in r.content.decode() and "This field is required" in r.content.decode()
    assert not LogEntry.objects.exists()
    with caplog.at_level(logging.INFO, logger="studyapp.console.resume_link"):
        r = _act(client, [target], confirm="yes", request="e-mail of 3 May")
    html = r.content.decode()
    assert r.status_code == 200
    assert f"http://testserver/p/{target.code}/" in html
    assert "no-cache" in r["Cache-Control"] and "no-store" in r["Cache-Control"]
    for other in people:
        if other != target:
            assert other.code not in html
    entry = LogEntry.objects.get()
    assert entry.user == owner and entry.action_flag == CHANGE
    assert entry.object_id == str(target.pk) and "e-mail of 3 May" in entry.get_change_message()
    assert entry.action_time is not None
    assert target.code not in entry.get_change_message()
    lines = [rec.getMessage() for rec in caplog.records if rec.name.endswith("resume_link")]
    assert len(lines) == 1 and "owner" in lines[0] and "e-mail of 3 May" in lines[0]
    assert str(target.pk) in lines[0] and target.code not in lines[0]


def test_resume_link_for_one_participant_only(owner: Any, people: list[Participant]) -> None:
    client = client_for(owner)
    r = _act(client, people[:2], confirm="yes", request="mail")
    assert r.status_code == 302  # back to the list, with the reason
    html = client.get(r["Location"]).content.decode()
    assert "Select exactly one participant" in html
    for p in people:
        assert p.code not in html
    assert not LogEntry.objects.exists()


def test_resume_link_needs_the_change_permission(study: Study, people: list[Participant]) -> None:
    viewer = researcher("viewer")
    viewer.user_permissions.set(Permission.objects.filter(codename__startswith="view_"))
    Study.objects.filter(pk=study.pk).update(owner=viewer)
    r = _act(client_for(viewer), [people[0]], confirm="yes", request="mail")
    assert people[0].code not in r.content.decode()
    assert not LogEntry.objects.exists()
    assert "copy_resume_link" not in client_for(viewer).get(CHANGELIST).content.decode()


def test_resume_link_only_within_the_studies_one_can_see(
    study: Study, people: list[Participant]
) -> None:
    stranger = researcher("stranger")  # all permissions, but the study is not theirs
    r = _act(client_for(stranger), [people[0]], confirm="yes", request="mail")
    assert people[0].code not in r.content.decode()
    assert not LogEntry.objects.exists()
