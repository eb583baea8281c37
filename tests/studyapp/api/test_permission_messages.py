"""A 403 from the API says what the account lacks, so a researcher knows what to ask their
lab's admin for: the missing model permission(s) by name, or that the account is not staff,
or staff without any permission on the study app."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission

pytestmark = pytest.mark.django_db


def _detail(response) -> str:
    assert response.status_code == 403, (response.status_code, response.content)
    return str(response.json()["detail"])


def test_a_view_only_account_is_told_it_lacks_change_study(cast):
    detail = _detail(
        cast.client("perm_view").patch(
            f"/api/studies/{cast.study.slug}/", {"title": "New"}, format="json"
        )
    )
    assert "studyapp.change_study" in detail
    assert "Can change study" in detail
    assert "view_study" not in detail  # it holds that one
    cast.study.refresh_from_db()
    assert cast.study.title == "Car loan"  # nothing changed


def test_each_missing_permission_is_named_and_only_those(cast):
    user = cast.users["perm_none"]
    user.user_permissions.set(
        Permission.objects.filter(content_type__app_label="studyapp", codename="view_study")
    )
    detail = _detail(cast.client("perm_none").get(f"/api/studies/{cast.study.slug}/monitor/"))
    assert "studyapp.view_participant" in detail and "Can view participant" in detail
    assert "studyapp.view_study" not in detail
    assert detail.startswith("Your account lacks the permission this needs:")


def test_two_missing_permissions_are_both_named(cast):
    user = cast.users["perm_none"]
    user.user_permissions.set(
        Permission.objects.filter(content_type__app_label="studyapp", codename="view_evaluation")
    )
    detail = _detail(cast.client("perm_none").get(f"/api/studies/{cast.study.slug}/monitor/"))
    assert "permissions this needs" in detail
    assert "studyapp.view_study" in detail and "studyapp.view_participant" in detail


def test_a_staff_account_without_study_permissions_is_told_so(cast):
    detail = _detail(cast.client("perm_none").get("/api/studies/"))
    assert "staff but holds no permission on the study app" in detail


def test_a_non_staff_account_is_told_it_is_not_staff(cast):
    detail = _detail(cast.client("plain").get("/api/studies/"))
    assert "not a staff account" in detail
