"""The API's Swagger UI works without internet access: its assets come from our own
static files (drf-spectacular-sidecar), not a CDN."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client

pytestmark = pytest.mark.django_db


def test_swagger_ui_assets_are_served_locally() -> None:
    user = get_user_model().objects.create_user("docs", password="pw-docs-1", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_study"))
    client = Client()
    client.force_login(user)
    page = client.get("/api/docs/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "cdn.jsdelivr" not in html and "unpkg.com" not in html
    assets = re.findall(r'(?:src|href)="(/static/[^"]+\.(?:js|css))"', html)
    assert assets, "the docs page names no local script or style"
    for url in assets:
        assert client.get(url).status_code == 200, url
