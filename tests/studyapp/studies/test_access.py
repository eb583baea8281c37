"""The access rule shared by the console and the API, on real rows."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser

from studyapp.models import Study
from studyapp.studies import access

pytestmark = pytest.mark.django_db


def _study(slug: str, owner=None) -> Study:
    return Study.objects.create(
        slug=slug,
        title=slug,
        schema={},
        schema_hash="x",
        design="sparsest:1",
        pool_csv="",
        pool_hash="",
        owner=owner,
    )


def test_owner_shared_other_superuser_anonymous() -> None:
    User = get_user_model()
    owner = User.objects.create_user("owner", is_staff=True)
    shared = User.objects.create_user("shared", is_staff=True)
    other = User.objects.create_user("other", is_staff=True)
    boss = User.objects.create_superuser("boss", password="x")
    inactive = User.objects.create_user("gone", is_staff=True, is_active=False)
    not_staff = User.objects.create_user("plain")
    mine = _study("mine", owner)
    mine.shared_with.add(shared, other)
    mine.shared_with.remove(other)
    theirs = _study("theirs", other)

    assert set(access.studies_for(owner)) == {mine}
    assert set(access.studies_for(shared)) == {mine}
    assert set(access.studies_for(other)) == {theirs}
    assert set(access.studies_for(boss)) == {mine, theirs}
    for nobody in (AnonymousUser(), inactive, not_staff):
        assert not access.studies_for(nobody).exists()
    assert access.can_access(shared, mine) and not access.can_access(shared, theirs)
    assert access.is_owner(owner, mine) and not access.is_owner(shared, mine)
    assert access.is_owner(boss, theirs)
    # a study shared with two people is listed once
    mine.shared_with.add(boss)
    assert access.studies_for(owner).count() == 1
