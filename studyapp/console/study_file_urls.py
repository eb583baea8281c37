"""Routes of the console's study file pages (`study_file_views`)."""

from __future__ import annotations

from django.urls import path

from studyapp.console import study_file_views as v

urlpatterns = [
    path("studies/<slug:slug>/study-file/", v.study_file_page, name="console-study-file"),
    path("studies/<slug:slug>/study-file.zip", v.study_file_zip, name="console-study-file-zip"),
    path(
        "studies/<slug:slug>/registrations/<int:pk>.<str:kind>",
        v.registration_download,
        name="console-registration",
    ),
    path("study-files/import/", v.study_file_import, name="console-study-file-import"),
]
