"""Routes of the REST API, mounted under /api/."""

from __future__ import annotations

from django.urls import path
from rest_framework.routers import SimpleRouter

from studyapp.api.auth_views import DocsView, ResearcherTokenView, SchemaView
from studyapp.api.data_views import (
    EvaluationViewSet,
    ExportView,
    MonitorView,
    PageVisitView,
    ParticipantViewSet,
)
from studyapp.api.design_check_views import DesignCheckView, FitsView
from studyapp.api.study_file_urls import study_file_urls
from studyapp.api.study_views import StudyViewSet
from studyapp.api.translation_views import TranslationView

router = SimpleRouter()
router.register("studies", StudyViewSet, basename="api-study")

STUDY = "studies/<slug:slug>/"

urlpatterns = [
    path("token/", ResearcherTokenView.as_view(), name="api-token"),
    path("schema/", SchemaView.as_view(), name="api-schema"),
    path("docs/", DocsView.as_view(url_name="api-schema"), name="api-docs"),
    *router.urls,
    path(
        f"{STUDY}participants/",
        ParticipantViewSet.as_view({"get": "list"}),
        name="api-participant-list",
    ),
    path(
        f"{STUDY}participants/<int:pk>/",
        ParticipantViewSet.as_view({"get": "retrieve", "delete": "destroy"}),
        name="api-participant-detail",
    ),
    path(
        f"{STUDY}evaluations/",
        EvaluationViewSet.as_view({"get": "list"}),
        name="api-evaluation-list",
    ),
    path(f"{STUDY}export/", ExportView.as_view(), name="api-export"),
    path(f"{STUDY}monitor/", MonitorView.as_view(), name="api-monitor"),
    path(f"{STUDY}design-check/", DesignCheckView.as_view(), name="api-design-check"),
    path(f"{STUDY}fits/", FitsView.as_view(), name="api-fits"),
    path(f"{STUDY}page-visits/", PageVisitView.as_view(), name="api-page-visits"),
    path(f"{STUDY}translations/<str:lang>/", TranslationView.as_view(), name="api-translation"),
    *study_file_urls(STUDY),
]
