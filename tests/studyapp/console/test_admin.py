"""The admin console's basics: list pages render, state moves go through the service, a live
study's design cannot be edited there. Setup, pool upload and access are in console/."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from studyapp.models import Study
from tests.studyapp.conftest import Walker, make_study


@pytest.fixture
def admin_client(transactional_db: Any) -> Client:
    get_user_model().objects.create_superuser("root", "", "a-long-password-1")
    c = Client()
    c.login(username="root", password="a-long-password-1")
    return c


def test_list_pages_render(admin_client: Client, walker: Walker) -> None:
    walker.to_profile()
    walker.submit_profile()
    walker.post(walker.evaluation_data())
    for model in (
        "study", "participant", "profile", "recourse", "evaluation", "pagevisit", "withdrawal",
    ):  # fmt: skip
        r = admin_client.get(f"/admin/studyapp/{model}/")
        assert r.status_code == 200, model
    r = admin_client.get("/admin/studyapp/participant/?flagged__exact=0")
    assert r.status_code == 200
    p = walker.participant
    r = admin_client.get(f"/admin/studyapp/participant/{p.pk}/change/")
    assert r.status_code == 200 and 'name="flagged"' in r.content.decode()
    assert 'name="state"' not in r.content.decode()  # what participants did is read-only


def test_go_live_action_and_frozen_design(admin_client: Client) -> None:
    draft = make_study(slug="d1", state="draft")
    page = admin_client.get(f"/admin/studyapp/study/{draft.pk}/change/").content.decode()
    assert 'name="design"' in page  # editable while draft
    r = admin_client.post(
        "/admin/studyapp/study/", {"action": "go_live", "_selected_action": [draft.pk]}
    )
    assert r.status_code == 302
    draft.refresh_from_db()
    assert draft.state == Study.State.LIVE
    page = admin_client.get(f"/admin/studyapp/study/{draft.pk}/change/").content.decode()
    assert 'name="design"' not in page  # read-only once live
    assert 'name="conditions"' not in page and 'name="texts"' not in page
    # the add page is the setup page
    r = admin_client.get("/admin/studyapp/study/add/")
    assert r.status_code == 200 and 'id="study-setup"' in r.content.decode()
