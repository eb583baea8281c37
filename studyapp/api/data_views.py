"""What a study collected: participants (list, one, delete on request), evaluations, the
export ZIP and the monitor figures. Readable by everyone the study is visible to; panel ids
only for its owner and only when asked for."""

from __future__ import annotations

from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import status, viewsets
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from studyapp.api import data_serializers as ds
from studyapp.api.filters import EvaluationFilter, ParticipantFilter
from studyapp.api.params import SLUG, WITH_PANEL_IDS, WITH_R, WITH_TEST, WITH_TEXT, Pages, flag
from studyapp.api.permissions import RESEARCHER, perms, require_owner, visible_study
from studyapp.api.schema import ApiSchema
from studyapp.models import Evaluation, Participant, Study
from studyapp.participation import selectors, withdrawal
from studyapp.studies import access


def _panel_ids(request: Request, study: Study) -> bool:
    """`?with_panel_ids=1`, refused (403) to anyone but the owner."""
    wanted = flag(request, "with_panel_ids")
    if wanted:
        require_owner(request.user, study, "see panel ids")
    return wanted


class StudyScoped:
    """A view under /studies/{slug}/: the study is looked up once, visible or 404."""

    permission_classes = RESEARCHER
    model_perms: dict[str, tuple[str, ...]] = {}  # each view says what it needs
    schema = ApiSchema()
    kwargs: dict[str, Any]
    request: Request

    @property
    def study(self) -> Study:
        if not hasattr(self, "_study"):
            self._study = visible_study(self.request.user, self.kwargs["slug"])
        return self._study


@extend_schema_view(
    list=extend_schema(
        summary="Participants of a study (paged, filterable)",
        parameters=[SLUG, WITH_PANEL_IDS, WITH_TEST],
        responses={
            200: ds.ParticipantWithPanelSerializer(many=True),
        },
    ),
    retrieve=extend_schema(
        summary="One participant, with profile and attention answers",
        parameters=[SLUG, WITH_PANEL_IDS],
        responses={200: ds.ParticipantDetailWithPanelSerializer},
    ),
    destroy=extend_schema(
        summary="Delete a participant and all their answers, on their request (logged)",
        parameters=[SLUG],
        responses={204: None},
    ),
)
class ParticipantViewSet(StudyScoped, viewsets.ReadOnlyModelViewSet):
    """Participants by pseudonymous id; never their access code."""

    model_perms = {
        "list": perms("view_participant"),
        "retrieve": perms("view_participant"),
        "destroy": perms("delete_participant"),  # the admin's "delete on request" asks this
    }
    filterset_class = ParticipantFilter
    pagination_class = Pages
    lookup_value_regex = "[0-9]+"
    queryset = Participant.objects.none()  # for the schema; requests use get_queryset

    def get_queryset(self) -> Any:
        people = selectors.study_participants(study=self.study)
        if self.action == "list" and not flag(self.request, "with_test"):
            people = people.filter(is_test=False)  # previews and bots, as in the export
        return people

    def get_serializer_class(self) -> Any:
        if getattr(self, "swagger_fake_view", False):
            return ds.ParticipantSerializer
        panel = _panel_ids(self.request, self.study)
        if self.action == "retrieve":
            return (
                ds.ParticipantDetailWithPanelSerializer if panel else ds.ParticipantDetailSerializer
            )
        return ds.ParticipantWithPanelSerializer if panel else ds.ParticipantSerializer

    def destroy(self, request: Request, slug: str, pk: str) -> Response:
        participant = self.get_object()
        withdrawal.participant_delete(participant=participant, by_user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema_view(
    list=extend_schema(
        summary="Evaluations of a study (paged, filterable)",
        parameters=[SLUG, WITH_TEXT, WITH_TEST],
        responses={200: ds.EvaluationWithTextSerializer(many=True)},
    )
)
class EvaluationViewSet(StudyScoped, viewsets.GenericViewSet):
    """One row per evaluation, with the recourse it rates."""

    model_perms = {"list": perms("view_evaluation")}
    filterset_class = EvaluationFilter
    pagination_class = Pages
    queryset = Evaluation.objects.none()  # for the schema; requests use get_queryset

    def get_queryset(self) -> Any:
        rows = selectors.study_evaluations(study=self.study)
        if not flag(self.request, "with_test"):
            rows = rows.filter(participant__is_test=False)  # previews and bots, as in the export
        return rows

    def get_serializer_class(self) -> Any:
        if getattr(self, "swagger_fake_view", False):
            return ds.EvaluationSerializer
        if flag(self.request, "with_text"):
            return ds.EvaluationWithTextSerializer
        return ds.EvaluationSerializer

    def list(self, request: Request, slug: str) -> Response:
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        return self.get_paginated_response(self.get_serializer(page, many=True).data)


class ExportView(StudyScoped, APIView):
    """evaluations.csv, participants.csv, codebook.csv, schema.json and Parquet copies,
    zipped while streaming (no timeout at 10,000 participants)."""

    #: everything the ZIP holds
    model_perms = {"get": access.EXPORT_PERMS}

    @extend_schema(
        summary="The study's export as a streamed ZIP (CSV, Parquet, codebook)",
        parameters=[SLUG, WITH_PANEL_IDS, WITH_TEXT, WITH_TEST, WITH_R],
        responses={
            (200, "application/zip"): OpenApiResponse(OpenApiTypes.BINARY, description="ZIP"),
        },
    )
    def get(self, request: Request, slug: str) -> Any:
        from studyapp.export import export_zip_stream

        study = self.study
        panel = _panel_ids(request, study)
        text, test = flag(request, "with_text"), flag(request, "with_test")
        with_r = flag(request, "with_r")
        response = StreamingHttpResponse(
            export_zip_stream(
                study, with_panel_ids=panel, with_text=text, with_test=test, with_r=with_r
            ),
            content_type="application/zip",
        )
        response["Content-Disposition"] = f'attachment; filename="{study.slug}-export.zip"'
        return response

    def perform_content_negotiation(self, request: Request, force: bool = False) -> Any:
        # the ZIP bypasses renderers; errors are JSON whatever the Accept header says
        return super().perform_content_negotiation(request, force=True)


class MonitorView(StudyScoped, APIView):
    """The figures of the console's monitor page (`studyapp.monitor.study_monitor`)."""

    model_perms = {"get": access.MONITOR_PERMS}

    @extend_schema(
        summary="Monitor figures: participants by state and condition, completion, "
        "durations, recourse latency and failures, quota fill, last activity",
        parameters=[SLUG],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request, slug: str) -> Response:
        from studyapp.studies.monitor import study_monitor

        return Response(study_monitor(self.study))


class PageVisitView(StudyScoped, APIView):
    """page_visits.csv as JSON: one row per page a participant was shown (paged)."""

    model_perms = {"get": perms("view_pagevisit")}

    @extend_schema(
        summary="Page visits (paradata): participant, page, entered, exited, seconds, views, "
        "time-out; the export's page_visits.csv rows",
        parameters=[SLUG, WITH_TEST],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request, slug: str) -> Response:
        from studyapp.export.tables import Tables

        tables = Tables.of(self.study, with_test=flag(request, "with_test"))
        paginator = Pages()
        page = paginator.paginate_queryset(list(tables.page_visit_rows()), request, view=self)
        return paginator.get_paginated_response(page)
