"""The design check and a draft's method fits over the API: the same services and the same
`check_summary` as the console page and the `check_design` command, so all three give the
same figures."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from studyapp.api.data_views import StudyScoped
from studyapp.api.errors import Conflict, DetailSerializer, as_validation_error
from studyapp.api.params import SLUG
from studyapp.api.permissions import perms
from studyapp.api.study_serializers import StrictSerializer
from studyapp.definition.errors import StudyError
from studyapp.generation import method_fitting, stored_fits
from studyapp.studies import access, design_check, tasks


class DesignCheckRequest(StrictSerializer):
    sample_size = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=design_check.MAX_SAMPLE,
        default=design_check.SAMPLE_SIZE,
        help_text="Profiles to draw.",
    )
    sample_source = serializers.CharField(
        required=False,
        default="pool",
        max_length=80,
        help_text="pool, or the slug of a pool-collection study whose answers are drawn.",
    )
    seed = serializers.IntegerField(
        required=False,
        min_value=0,
        allow_null=True,
        default=None,
        help_text="Default: the study's.",
    )


class DesignCheckView(StudyScoped, APIView):
    """The study's latest design check (GET) and a new one, run by a worker (POST)."""

    model_perms = {"get": access.MONITOR_PERMS, "post": perms("change_study")}

    @extend_schema(
        summary="The latest design check: approval rate, per condition and design part the "
        "own-plan rate and fallback reasons, sparsity, proximity, plans per participant; "
        "its warnings under the study's thresholds; whether it is stale ({check: null} "
        "before the first)",
        parameters=[SLUG],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request, slug: str) -> Response:
        summary = design_check.check_summary(self.study, design_check.latest_check(self.study))
        return Response({"check": summary})

    @extend_schema(
        summary="Run a design check (a Celery task; fits missing methods first). 202 with "
        "the queued check; GET shows its progress and figures",
        parameters=[SLUG],
        request=DesignCheckRequest,
        responses={202: OpenApiTypes.OBJECT},
    )
    def post(self, request: Request, slug: str) -> Response:
        serializer = DesignCheckRequest(data=request.data)
        serializer.is_valid(raise_exception=True)
        data: dict[str, Any] = dict(serializer.validated_data)
        try:
            check = tasks.design_check_queue(study=self.study, by=request.user, **data)
        except StudyError as exc:
            raise as_validation_error(exc, DesignCheckRequest().fields) from None
        check.refresh_from_db()
        return Response(
            design_check.check_summary(self.study, check), status=status.HTTP_202_ACCEPTED
        )


class FitsView(StudyScoped, APIView):
    """The fits of the study's methods on its current pool and model (GET), and fitting them
    now, before going live (POST; going live reuses them)."""

    model_perms = {"get": perms("view_study"), "post": perms("change_study")}

    def _rows(self) -> list[dict[str, Any]]:
        rows = stored_fits.current_rows(self.study)
        return list(rows.values("strategy", "state", "progress", "seconds", "message"))

    @extend_schema(
        summary="Fits of the study's pool strategies and methods (state, progress)",
        parameters=[SLUG],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request, slug: str) -> Response:
        return Response({"fits": self._rows()})

    @extend_schema(
        summary="Fit the study's methods now (a Celery task), e.g. for a draft's pilot",
        parameters=[SLUG],
        request=None,
        responses={202: OpenApiTypes.OBJECT, 409: DetailSerializer},
    )
    def post(self, request: Request, slug: str) -> Response:
        try:
            method_fitting.fits_for_draft(study=self.study)
        except StudyError as exc:
            raise Conflict(str(exc)) from None
        return Response({"fits": self._rows()}, status=status.HTTP_202_ACCEPTED)
