"""A server error shows a page that says the answers are saved and to reload (in English and
Japanese, with no database or session needed to render it), and the error is logged with its
traceback."""

from __future__ import annotations

import logging
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.test import Client, override_settings
from django.urls import path


def _boom(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("the database went away")


urlpatterns = [path("boom/", _boom)]


@override_settings(ROOT_URLCONF=__name__, DEBUG=False)
def test_a_server_error_says_the_answers_are_saved(caplog: Any) -> None:
    with caplog.at_level(logging.ERROR, logger="django.request"):
        r = Client(raise_request_exception=False).get("/boom/")
    assert r.status_code == 500
    body = r.content.decode()
    assert "Your answers so far are saved" in body and "reload" in body
    assert "これまでの回答は保存されています" in body
    record = next(rec for rec in caplog.records if rec.name == "django.request")
    assert record.exc_info and "the database went away" in str(record.exc_info[1])
