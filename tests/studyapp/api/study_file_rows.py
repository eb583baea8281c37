"""The permission matrix's rows of the study file endpoints (`test_permissions.ROWS`)."""

from __future__ import annotations

from typing import Any


def _study_zip(role: str) -> bytes:
    from studyapp.models import Study
    from studyapp.prereg.study_files import study_file_zip

    return study_file_zip(Study.objects.get(slug="loans"))


def study_file_rows(row: Any, expect: Any, seen: dict) -> list[Any]:
    none_yet = expect(other=404, shared=404, owner=404)  # not registered: 404 for all
    return [
        row("GET", "/api/studies/{slug}/study-file/", seen, needs="view"),
        row(
            "POST",
            "/api/study-files/",
            expect(other=201, shared=201, owner=201),
            query="slug=imported",
            body=_study_zip,
            content_type="application/zip",
            needs="add",
        ),
        row("GET", "/api/studies/{slug}/versions/", seen, needs="view"),
        row("GET", "/api/studies/{slug}/versions/diff/", seen, query="a=1&b=1", needs="view"),
        row("GET", "/api/studies/{slug}/registration/", none_yet, needs="view"),
        row(
            "POST",
            "/api/studies/{slug}/registration/",
            expect(other=404, shared=201, owner=201),
            needs="change",
        ),
        row("GET", "/api/studies/{slug}/deviations/", none_yet, needs="view"),
    ]
