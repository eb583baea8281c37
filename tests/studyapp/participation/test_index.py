"""The site's root page lists no study: a live study is reachable only by its link."""

from __future__ import annotations

from typing import Any

from django.test import Client


def test_the_root_page_names_no_live_study(study: Any) -> None:
    assert study.state == "live"
    page = Client().get("/")
    assert page.status_code == 200
    body = page.content.decode()
    assert study.title not in body and f"/s/{study.slug}/" not in body
    assert "use the link you were given" in body
    assert Client().get(f"/s/{study.slug}/").status_code == 200  # the link itself works
