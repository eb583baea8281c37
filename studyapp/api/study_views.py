"""Study endpoints: list, create, retrieve, change settings, delete, state, duplicate, share,
pool upload. Views validate with a serializer, call a study service, answer; the access
rule is `studyapp.access` (through `permissions`), what a live study freezes is
`studies.updates` (the console's list too)."""

from __future__ import annotations

from typing import Any

from django.db.models import Count
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import JSONParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from studyapp.api import study_serializers as ss
from studyapp.api.errors import Conflict, DetailSerializer, as_validation_error
from studyapp.api.params import SLUG
from studyapp.api.parsers import CSVBodyParser
from studyapp.api.permissions import RESEARCHER, perms, require_owner
from studyapp.api.schema import ERROR_BODY_SCHEMA, ApiSchema
from studyapp.definition.errors import StudyError, StudyFrozen
from studyapp.models import Study
from studyapp.studies import access, design_check, duplicate, pool, services, study_setup, updates

CONFLICT = OpenApiResponse(DetailSerializer, description="The study's state does not allow this.")


def _validated(serializer_class: type, request: Request, **context: Any) -> dict[str, Any]:
    serializer = serializer_class(data=request.data, context={"request": request, **context})
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


@extend_schema_view(
    list=extend_schema(summary="Studies you own or that are shared with you"),
    retrieve=extend_schema(
        summary="One study (with its schema)",
        parameters=[SLUG],
        responses={200: ss.StudyDetailSerializer},
    ),
)
class StudyViewSet(viewsets.GenericViewSet):
    permission_classes = RESEARCHER
    #: the admin's permissions: going live, sharing and a new pool change the study
    model_perms = {
        "list": perms("view_study"),
        "retrieve": perms("view_study"),
        "create": perms("add_study"),
        "partial_update": perms("change_study"),
        "destroy": perms("delete_study"),
        "state": perms("change_study"),
        "duplicate": perms("view_study", "add_study"),
        "share": perms("change_study"),
        "pool": perms("change_study"),
    }
    schema = ApiSchema()
    serializer_class = ss.StudySerializer
    lookup_field = "slug"
    lookup_value_regex = "[-a-zA-Z0-9_]+"
    filter_backends: list = []
    parser_classes = [JSONParser]

    def get_queryset(self) -> Any:
        return (
            access.studies_for(self.request.user)
            .select_related("owner")
            .prefetch_related("shared_with", "conditions", "quotas__condition")
            .annotate(participant_count=Count("participants", distinct=True))
            .order_by("slug")
        )

    def _out(self, study: Study, code: int = status.HTTP_200_OK) -> Response:
        study = self.get_queryset().filter(pk=study.pk).first() or study
        return Response(ss.StudyDetailSerializer(study).data, status=code)

    def list(self, request: Request) -> Response:
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(ss.StudySerializer(page, many=True).data)

    def retrieve(self, request: Request, slug: str) -> Response:
        return Response(ss.StudyDetailSerializer(self.get_object()).data)

    @extend_schema(
        summary="Create a draft study (owner: you)",
        request=ss.StudyCreateRequest,
        responses={201: ss.StudyDetailSerializer},
    )
    def create(self, request: Request) -> Response:
        data = _validated(ss.StudyCreateSerializer, request)
        pool_text = data.get("pool")
        try:
            study = study_setup.study_create_from_schema(
                slug=data["slug"],
                title=data["settings"].get("title", ""),
                schema=data.get("schema"),
                owner=request.user,
                pool=pool_text.encode() if pool_text is not None else None,
                pool_size=data.get("pool_size", 3683),
                settings=data["settings"],
            )
        except pool.PoolRejected as exc:
            body = {"pool": [str(exc)], "pool_preview": exc.preview.to_dict()}
            return Response(body, status=status.HTTP_400_BAD_REQUEST)
        except StudyError as exc:
            raise as_validation_error(exc, ss.StudyCreateSerializer().fields) from None
        return self._out(study, status.HTTP_201_CREATED)

    @extend_schema(
        summary="Change settings (design and texts only while the study is a draft)",
        parameters=[SLUG],
        request=ss.StudySettingsChange,
        responses={200: ss.StudyDetailSerializer, 409: CONFLICT},
    )
    def partial_update(self, request: Request, slug: str) -> Response:
        study = self.get_object()
        changes = _validated(ss.StudyUpdateSerializer, request, study=study)["settings"]
        try:
            updates.study_update(study=study, changes=changes)
        except StudyFrozen as exc:
            raise Conflict(str(exc)) from None
        except StudyError as exc:
            if study.state != Study.State.DRAFT:
                raise Conflict(str(exc)) from None
            raise as_validation_error(exc, ss.StudyUpdateSerializer().fields) from None
        return self._out(study)

    @extend_schema(
        summary="Delete a study nobody has taken part in (owner only)",
        parameters=[SLUG],
        responses={204: None, 409: CONFLICT},
    )
    def destroy(self, request: Request, slug: str) -> Response:
        study = self.get_object()
        require_owner(request.user, study, "delete it")
        try:
            updates.study_delete(study=study)
        except StudyError as exc:
            raise Conflict(str(exc)) from None
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        summary="Go live or close",
        parameters=[SLUG],
        request=ss.StateSerializer,
        responses={200: ss.StudyDetailSerializer, 409: CONFLICT},
    )
    @action(detail=True, methods=["post"])
    def state(self, request: Request, slug: str) -> Response:
        study = self.get_object()
        data = _validated(ss.StateSerializer, request)
        try:
            services.study_set_state(
                study=study, state=data["state"], acknowledged=data["acknowledge"], by=request.user
            )
        except design_check.DesignWarnings as exc:
            # 409 with each missing warning (key, text, value, threshold) to acknowledge
            body = {"detail": str(exc), "warnings": exc.missing}
            return Response(body, status=status.HTTP_409_CONFLICT)
        except StudyError as exc:
            raise Conflict(str(exc)) from None
        return self._out(study)

    @extend_schema(
        summary="Copy a study into a new draft owned by you (owner only)",
        parameters=[SLUG],
        request=ss.DuplicateSerializer,
        responses={201: ss.StudyDetailSerializer},
    )
    @action(detail=True, methods=["post"])
    def duplicate(self, request: Request, slug: str) -> Response:
        study = self.get_object()
        require_owner(request.user, study, "duplicate it")
        data = _validated(ss.DuplicateSerializer, request)
        try:
            copy = duplicate.study_duplicate(study=study, slug=data["slug"], owner=request.user)
        except StudyError as exc:
            raise as_validation_error(exc, ["slug"]) from None
        return self._out(copy, status.HTTP_201_CREATED)

    @extend_schema(
        summary="Share with another researcher, or stop sharing (owner only)",
        parameters=[SLUG],
        request=ss.ShareSerializer,
        responses={200: ss.StudyDetailSerializer},
    )
    @action(detail=True, methods=["post"])
    def share(self, request: Request, slug: str) -> Response:
        study = self.get_object()
        require_owner(request.user, study, "share it")
        data = _validated(ss.ShareSerializer, request)
        try:
            updates.study_share(study=study, user=data["username"], remove=data["remove"])
        except StudyError as exc:
            raise ValidationError({"username": [str(exc)]}) from None
        return self._out(study)

    @extend_schema(
        summary="Replace a draft study's pool (all or nothing)",
        description=(
            "Send the CSV as a multipart form field `file`, or as the raw body with "
            "`Content-Type: text/csv`. 200 with the preview when stored; 400 with the "
            "preview's errors and rejected rows when not (nothing changed)."
        ),
        parameters=[SLUG],
        request={
            "multipart/form-data": ss.PoolUploadSerializer,
            "text/csv": OpenApiTypes.STR,
        },
        responses={
            200: ss.PoolPreviewSerializer,
            400: OpenApiResponse(
                ERROR_BODY_SCHEMA,
                description="The preview (ok false, errors, rejected rows) or a field error.",
            ),
            409: CONFLICT,
        },
    )
    @action(
        detail=True,
        methods=["put"],
        parser_classes=[MultiPartParser, CSVBodyParser],
        url_path="pool",
    )
    def pool(self, request: Request, slug: str) -> Response:
        study = self.get_object()
        try:
            updates.require_draft(study, "its pool")
        except StudyFrozen as exc:
            raise Conflict(str(exc)) from None
        data = self._pool_bytes(request)
        try:
            preview = pool.study_replace_pool(study=study, data=data)
        except StudyError as exc:
            raise Conflict(str(exc)) from None
        body = preview.to_dict()
        return Response(body, status=status.HTTP_200_OK if preview.ok else 400)

    @staticmethod
    def _pool_bytes(request: Request) -> bytes:
        if isinstance(request.data, bytes):
            return request.data
        if (request.content_type or "").startswith("text/csv"):
            return b""  # an empty body never reaches the parser
        unknown = sorted(set(request.data) - {"file"})
        if unknown:
            raise ValidationError(
                {name: ["Unknown field; send the CSV as 'file'."] for name in unknown}
            )
        upload = request.FILES.get("file")
        if upload is None:
            raise ValidationError(
                {"file": ["Send the pool CSV as the multipart field 'file' or as a text/csv body."]}
            )
        return upload.read()
