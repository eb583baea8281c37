"""The study file over the API: the ZIP round-trips byte-identical through import, a bad file
is a 400 naming its path with nothing created, versions record the token's user, and the
registration and deviations endpoints answer as the command does."""

from __future__ import annotations

import io
import zipfile
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from studyapp.models import Study
from tests.studyapp.api.conftest import Cast, make_cast


@pytest.fixture
def tcast(transactional_db: Any) -> Cast:
    return make_cast(participants=False)


def _upload(data: bytes, slug: str) -> dict[str, Any]:
    return {"file": SimpleUploadedFile("s.zip", data, "application/zip"), "slug": slug}


def test_zip_round_trip_through_the_api(tcast: Cast) -> None:
    owner = tcast.client("owner")
    first = owner.get("/api/studies/loans/study-file/")
    assert first.status_code == 200 and first["Content-Type"] == "application/zip"
    r = owner.post("/api/study-files/", _upload(first.content, "loans2"), format="multipart")
    assert r.status_code == 201, r.content
    copy = Study.objects.get(slug="loans2")
    assert copy.owner == tcast.users["owner"] and copy.state == "draft"
    again = owner.get("/api/studies/loans2/study-file/")
    assert again.content == first.content
    versions = owner.get("/api/studies/loans2/versions/").json()
    assert [v["number"] for v in versions] == [1] and versions[0]["by"] == "owner"


def test_a_bad_zip_is_a_400_by_path_and_creates_nothing(tcast: Cast) -> None:
    owner = tcast.client("owner")
    data = owner.get("/api/studies/loans/study-file/").content
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(
            "study.json",
            src.read("study.json").replace(b'"format_version": 1', b'"format_version": 9'),
        )
        zf.writestr("pool.csv", src.read("pool.csv"))
    before = Study.objects.count()
    r = owner.post("/api/study-files/", _upload(buf.getvalue(), "bad"), format="multipart")
    assert r.status_code == 400
    assert r.json()["file"][0].startswith("format_version: unknown format version 9")
    assert Study.objects.count() == before
    # the raw ZIP body with ?slug= works as the multipart upload does
    r = owner.post("/api/study-files/?slug=raw", data, content_type="application/zip")
    assert r.status_code == 201 and Study.objects.filter(slug="raw").exists()
    # a researcher who may not add studies is refused
    r = tcast.client("perm_view").post("/api/study-files/", _upload(data, "x"), format="multipart")
    assert r.status_code == 403


def test_registration_diff_and_deviations(tcast: Cast) -> None:
    owner = tcast.client("owner")
    assert owner.get("/api/studies/loans/registration/").status_code == 404
    reg = owner.post("/api/studies/loans/registration/")
    assert reg.status_code == 201
    body = reg.json()
    assert body["by"] == "owner" and "## 5. Analysis plan" in body["markdown"]
    assert owner.get("/api/studies/loans/registration/").json()["sha256"] == body["sha256"]
    r = owner.patch("/api/studies/loans/", {"title": "New"}, format="json")
    assert r.status_code == 200, r.content
    report = owner.get("/api/studies/loans/deviations/").json()
    assert [d["kind"] for d in report["deviations"]] == ["edit_after_registration"]
    n = report["deviations"][0]["version"]
    diff = owner.get(f"/api/studies/loans/versions/diff/?a={n - 1}&b={n}").json()
    assert [c["path"] for c in diff["changes"]] == ["settings.title"]
    assert tcast.client("other").get("/api/studies/loans/versions/").status_code == 404
