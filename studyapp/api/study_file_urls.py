"""Routes of the study file, versions, registration and deviations (`study_file_views`)."""

from __future__ import annotations

from django.urls import URLPattern, path

from studyapp.api import study_file_views as v


def study_file_urls(study: str) -> list[URLPattern]:
    return [
        path("study-files/", v.StudyFileImportView.as_view(), name="api-study-file-import"),
        path(f"{study}study-file/", v.StudyFileView.as_view(), name="api-study-file"),
        path(f"{study}versions/", v.VersionsView.as_view(), name="api-versions"),
        path(f"{study}versions/diff/", v.VersionDiffView.as_view(), name="api-version-diff"),
        path(f"{study}registration/", v.RegistrationView.as_view(), name="api-registration"),
        path(f"{study}deviations/", v.DeviationsView.as_view(), name="api-deviations"),
    ]
