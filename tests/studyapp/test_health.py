"""`/healthz`, the balancer's check of each web node: answered whatever the Host header and
without the HTTPS redirect (the balancer asks each node by its address over plain HTTP),
with no database query; `?db=1` adds one."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client, override_settings


@pytest.mark.django_db
@override_settings(SECURE_SSL_REDIRECT=True, ALLOWED_HOSTS=["study.example.org"])
def test_health_is_cheap_and_needs_no_host_or_https(django_assert_num_queries: Any) -> None:
    client = Client(HTTP_HOST="10.0.0.7:8000")
    with django_assert_num_queries(0):
        r = client.get("/healthz")
    assert r.status_code == 200 and r.content == b"ok\n"
    assert "Set-Cookie" not in r.headers
    # any other page still gets the host check and the redirect
    assert client.get("/").status_code == 400


@pytest.mark.django_db
def test_health_with_the_database(django_assert_num_queries: Any) -> None:
    with django_assert_num_queries(1):
        r = Client().get("/healthz?db=1")
    assert r.status_code == 200 and r.content == b"ok\n"
