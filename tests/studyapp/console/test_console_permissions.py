"""The console's own pages (monitor, its JSON, the export ZIP) ask the same Django model
permissions as the API: owning a study is not enough without them."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.urls import reverse

from studyapp.studies import access
from tests.studyapp.conftest import make_study
from tests.studyapp.console.conftest import PASSWORD, client_for

PAGES = {
    "console-monitor": access.MONITOR_PERMS,
    "console-monitor-json": access.MONITOR_PERMS,
    "console-export": access.EXPORT_PERMS,
}


def _staff_owner(codenames: list[str]) -> tuple[Any, Any]:
    user = get_user_model().objects.create_user(f"r{len(codenames)}", "", PASSWORD, is_staff=True)
    user.user_permissions.set(
        Permission.objects.filter(content_type__app_label="studyapp", codename__in=codenames)
    )
    study = make_study(slug=f"s{len(codenames)}")
    study.owner = user
    study.save(update_fields=["owner"])
    return user, study


@pytest.mark.parametrize("name", sorted(PAGES))
def test_owner_without_permissions_gets_403(transactional_db: Any, name: str) -> None:
    user, study = _staff_owner([])
    r = client_for(user).get(reverse(name, args=[study.slug]))
    assert r.status_code == 403


@pytest.mark.parametrize("name", sorted(PAGES))
def test_each_missing_permission_is_refused(transactional_db: Any, name: str) -> None:
    needed = [p.partition(".")[2] for p in PAGES[name]]
    for left_out in needed:
        user, study = _staff_owner([c for c in needed if c != left_out])
        r = client_for(user).get(reverse(name, args=[study.slug]))
        assert r.status_code == 403, left_out
        user.delete()
        study.delete()


@pytest.mark.parametrize("name", sorted(PAGES))
def test_the_view_permissions_suffice(transactional_db: Any, name: str) -> None:
    user, study = _staff_owner([p.partition(".")[2] for p in PAGES[name]])
    r = client_for(user).get(reverse(name, args=[study.slug]))
    assert r.status_code == 200
    if name == "console-export":
        assert b"".join(r.streaming_content)[:2] == b"PK"


def test_change_permissions_count_as_view(transactional_db: Any) -> None:
    user, study = _staff_owner(["change_study", "change_participant"])
    r = client_for(user).get(reverse("console-monitor", args=[study.slug]))
    assert r.status_code == 200
