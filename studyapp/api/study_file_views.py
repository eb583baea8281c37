"""The study as one file over the API: its ZIP (GET), a new draft study from one (POST), the
version history and a comparison of two versions, the registration (freeze, read) and the
deviation report; the same services as the `study` command and the console."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.parsers import BaseParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from studyapp.api.data_views import StudyScoped
from studyapp.api.params import SLUG
from studyapp.api.permissions import RESEARCHER, perms
from studyapp.api.schema import ApiSchema
from studyapp.definition.errors import ConfigError, StudyError
from studyapp.prereg import bundle, deviations, history, study_files
from studyapp.prereg.diff import document_diff
from studyapp.prereg.markdown import registration_markdown


class ZipBodyParser(BaseParser):
    """A study file's ZIP sent as the raw body (`?slug=` names the new study)."""

    media_type = "application/zip"

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        return stream.read() if stream is not None else b""


class StudyFileUpload(serializers.Serializer):
    file = serializers.FileField(help_text="The study file's ZIP (study.json, pool.csv, ...).")
    slug = serializers.SlugField(help_text="The new study's slug.")


class VersionSerializer(serializers.Serializer):
    number = serializers.IntegerField()
    at = serializers.DateTimeField()
    by = serializers.CharField(source="by.username", default="")
    sha256 = serializers.CharField()
    note = serializers.CharField()


def _registration_body(reg: Any) -> dict[str, Any]:
    by = reg.by.get_username() if reg.by_id else ""
    data = bundle.bundle_of(reg)
    return {
        "sha256": reg.sha256,
        "at": reg.at.isoformat(),
        "by": by,
        "reason": reg.reason,
        "version": reg.version.number,
        "bundle": data,
        "markdown": registration_markdown(data, reg.sha256, at=reg.at.isoformat(), by=by),
    }


class StudyFileView(StudyScoped, APIView):
    model_perms = {"get": perms("view_study")}

    @extend_schema(
        summary="The study file as a ZIP: study.json (docs/schema/study-file.schema.json), "
        "pool.csv and, for an uploaded model, decision_model.bin",
        parameters=[SLUG],
        responses={(200, "application/zip"): OpenApiResponse(OpenApiTypes.BINARY)},
    )
    def get(self, request: Request, slug: str) -> Any:
        response = HttpResponse(
            study_files.study_file_zip(self.study), content_type="application/zip"
        )
        response["Content-Disposition"] = f'attachment; filename="{self.study.slug}-study.zip"'
        return response


class StudyFileImportView(APIView):
    permission_classes = RESEARCHER
    model_perms = {"post": perms("add_study")}
    parser_classes = [MultiPartParser, ZipBodyParser]
    schema = ApiSchema()

    @extend_schema(
        summary="Create a draft study (owner: you) from a study file's ZIP",
        description="The whole file is checked before anything is created: an unknown format "
        "version, a setting the rules refuse or a file whose SHA-256 differs from the one "
        "named is a 400 naming its path (e.g. `pool.sha256`). A model file needs a superuser.",
        parameters=[
            OpenApiParameter("slug", str, description="The new study's slug (raw ZIP body).")
        ],
        request={
            "multipart/form-data": StudyFileUpload,
            "application/zip": OpenApiTypes.BINARY,
        },
        responses={201: OpenApiTypes.OBJECT},
    )
    def post(self, request: Request) -> Response:
        if isinstance(request.data, bytes):
            body = {"slug": request.query_params.get("slug", "")}
            form = StudyFileUpload(data=body, partial=True)
        else:
            form = StudyFileUpload(data=request.data)
        form.is_valid(raise_exception=True)
        if "slug" not in form.validated_data:
            raise ValidationError({"slug": ["required"]})
        raw = request.data if isinstance(request.data, bytes) else None
        try:
            upload = raw if raw is not None else form.validated_data["file"].read()
            data, files = study_files.files_of_zip(upload)
            with history.acting_as(request.user, "imported from a study file (API)"):
                study = study_files.study_file_create(
                    data=data, files=files, slug=form.validated_data["slug"],
                    owner=request.user, allow_model_file=request.user.is_superuser,
                )  # fmt: skip
        except ConfigError as exc:
            raise ValidationError({"file": exc.messages}) from None
        except StudyError as exc:
            field = "slug" if str(exc).startswith("slug") else "file"
            raise ValidationError({field: [str(exc)]}) from None
        return Response({"slug": study.slug, "state": study.state}, status=status.HTTP_201_CREATED)


class VersionsView(StudyScoped, APIView):
    model_perms = {"get": perms("view_study")}

    @extend_schema(
        summary="The study's versions: number, when, by whom, hash",
        parameters=[SLUG],
        responses={200: VersionSerializer(many=True)},
    )
    def get(self, request: Request, slug: str) -> Response:
        history.latest_version(self.study)
        versions = self.study.versions.select_related("by").order_by("number")
        return Response(VersionSerializer(versions, many=True).data)


class VersionDiffView(StudyScoped, APIView):
    model_perms = {"get": perms("view_study")}

    @extend_schema(
        summary="What changed from version a to version b (one entry per changed value)",
        parameters=[
            SLUG,
            OpenApiParameter("a", int, required=True, description="The earlier version."),
            OpenApiParameter("b", int, required=True, description="The later version."),
        ],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request, slug: str) -> Response:
        try:
            a, b = int(request.query_params["a"]), int(request.query_params["b"])
        except (KeyError, ValueError):
            raise ValidationError({"a": ["a and b: two version numbers"]}) from None
        if not (1 <= a <= 2**31 - 1 and 1 <= b <= 2**31 - 1):
            raise ValidationError({"a": [f"a and b: version numbers from 1, got {a} and {b}"]})
        history.latest_version(self.study)
        found = {v.number: v for v in self.study.versions.filter(number__in=[a, b])}
        missing = [n for n in (a, b) if n not in found]
        if missing:
            raise NotFound(f"no version {missing[0]} (see the versions endpoint)")
        changes = document_diff(found[a].document, found[b].document)
        return Response({"changes": [
            {"path": c.path, "kind": c.kind, "line": c.line()} for c in changes
        ]})  # fmt: skip


class RegistrationView(StudyScoped, APIView):
    model_perms = {"get": perms("view_study"), "post": perms("change_study")}

    @extend_schema(
        summary="The study's first registration: bundle, SHA-256, OSF-style Markdown",
        parameters=[SLUG],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request, slug: str) -> Response:
        reg = bundle.first_registration(self.study)
        if reg is None:
            raise NotFound("not registered yet (a study registers when it goes live, or by POST)")
        return Response(_registration_body(reg))

    @extend_schema(
        summary="Register the study now (freeze its definition and analysis plan)",
        parameters=[SLUG],
        request=None,
        responses={201: OpenApiTypes.OBJECT},
    )
    def post(self, request: Request, slug: str) -> Response:
        with history.acting_as(request.user):
            reg = bundle.study_register(study=self.study, by=request.user)
        return Response(_registration_body(reg), status=status.HTTP_201_CREATED)


class DeviationsView(StudyScoped, APIView):
    model_perms = {"get": perms("view_study")}

    @extend_schema(
        summary="Every difference between the registration and what happened",
        parameters=[SLUG],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request, slug: str) -> Response:
        if bundle.first_registration(self.study) is None:
            raise NotFound("not registered yet: no deviations to report")
        return Response(deviations.study_deviations(self.study))
