"""Routes of the researcher console, mounted under /console/."""

from __future__ import annotations

from django.urls import include, path

from studyapp.console import design_check_views, retention_views, translation_views, views

urlpatterns = [
    path("studies/<slug:slug>/monitor/", views.monitor_page, name="console-monitor"),
    path("studies/<slug:slug>/monitor.json", views.monitor_json, name="console-monitor-json"),
    path("studies/<slug:slug>/export.zip", views.export_zip, name="console-export"),
    path(
        "studies/<slug:slug>/design-check/",
        design_check_views.design_check_page,
        name="console-design-check",
    ),
    path(
        "studies/<slug:slug>/design-check.json",
        design_check_views.design_check_json,
        name="console-design-check-json",
    ),
    path(
        "studies/<slug:slug>/translations/",
        translation_views.translations_page,
        name="console-translations",
    ),
    path(
        "studies/<slug:slug>/translations/<str:lang>.po",
        translation_views.translation_download,
        name="console-translation-po",
    ),
    path(
        "studies/<slug:slug>/data-protection/",
        retention_views.data_protection_page,
        name="console-data-protection",
    ),
    path(
        "studies/<slug:slug>/deletion-receipts.csv",
        retention_views.receipts_csv,
        name="console-deletion-receipts",
    ),
    path("", include("studyapp.coding.urls")),  # the qualitative coding's pages
    path("", include("studyapp.panel.urls")),  # the Prolific connection's page
    path("", include("studyapp.console.study_file_urls")),  # study file, versions, registration
]
