"""A previewed pool upload survives its confirm landing on another web node: with the shared
cache (STUDYAPP_CACHE_URL, here Django's in-process cache standing in for Redis) the
preview no longer lives in one node's var/ folder. The control: without it, a confirm on a
node with another var/ finds nothing and says the preview expired."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings

from studyapp.models import Study
from tests.studyapp.console.conftest import pool_bytes


def _preview_then_confirm(study: Study, client: Client, node_a: Path, node_b: Path) -> str:
    url = f"/admin/studyapp/study/{study.pk}/pool/"
    with override_settings(VAR_DIR=node_a):
        r = client.post(url, {"file": SimpleUploadedFile("p.csv", pool_bytes(77))})
    token = r.content.decode().split('name="token" value="', 1)[1].split('"', 1)[0]
    with override_settings(VAR_DIR=node_b):
        r = client.post(url, {"confirm": "1", "token": token}, follow=True)
    return r.content.decode()


@pytest.mark.parametrize("shared", [True, False])
def test_confirm_on_another_node(
    draft: Study, owner_client: Client, tmp_path: Path, shared: bool
) -> None:
    cache.clear()
    before = draft.pool_hash
    with override_settings(STUDYAPP_SHARED_CACHE=shared):
        page = _preview_then_confirm(draft, owner_client, tmp_path / "a", tmp_path / "b")
    draft.refresh_from_db()
    if shared:
        assert "77 profiles stored" in page and draft.pool_rows == 77
        assert not (tmp_path / "a" / "pool-uploads").exists()  # nothing left on a node
    else:
        assert "expired" in page and draft.pool_hash == before
