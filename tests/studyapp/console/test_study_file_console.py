"""The console's study file pages: download and upload round-trip byte-identical, a bad
upload names its path and creates nothing, versions are compared as a readable diff with who
made each, and Register now freezes a registration whose Markdown can be downloaded."""

from __future__ import annotations

import io
import zipfile
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from studyapp.models import Study
from studyapp.studies import updates
from tests.studyapp.console.conftest import client_for, researcher


def _zip_with(data: bytes, name: str, content: bytes) -> bytes:
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for n in src.namelist():
            zf.writestr(n, content if n == name else src.read(n))
    return buf.getvalue()


def test_download_upload_round_trip(draft: Study, owner_client: Client) -> None:
    page = owner_client.get(f"/admin/studyapp/study/{draft.pk}/change/").content.decode()
    assert 'id="study-file-link"' in page
    data = owner_client.get("/console/studies/draft/study-file.zip").content
    r = owner_client.post(
        "/console/study-files/import/",
        {"file": SimpleUploadedFile("s.zip", data), "slug": "draft-copy"},
    )
    assert r.status_code == 302 and r["Location"] == "/console/studies/draft-copy/study-file/"
    assert owner_client.get("/console/studies/draft-copy/study-file.zip").content == data
    # a pool that is not the one hashed: refused by path, nothing created
    bad = _zip_with(data, "pool.csv", b"id,income\n1,2\n")
    r = owner_client.post(
        "/console/study-files/import/", {"file": SimpleUploadedFile("s.zip", bad), "slug": "bad"}
    )
    assert r.status_code == 200 and "pool.sha256: pool.csv has SHA-256" in r.content.decode()
    assert not Study.objects.filter(slug="bad").exists()


def test_versions_compared_and_registration(draft: Study, owner: Any) -> None:
    client = client_for(owner)
    updates.study_update(study=draft, changes={"waiting_timeout_s": 75})
    page = client.get("/console/studies/draft/study-file/?a=1&b=2").content.decode()
    assert "settings.waiting_timeout_s" in page and "Version 1 → version 2 (1 change)" in page
    assert client.post("/console/studies/draft/study-file/").status_code == 302
    reg = draft.registrations.get()
    md = client.get(f"/console/studies/draft/registrations/{reg.pk}.md").content.decode()
    assert md.startswith("# Preregistration:") and reg.sha256 in md
    assert client.get(f"/console/studies/draft/registrations/{reg.pk}.json").content == (
        reg.bundle.encode()
    )
    other = client_for(researcher("other"))
    assert other.get("/console/studies/draft/study-file/").status_code == 404
