"""A study's texts for translators over the API: the PO file of one of its languages (GET)
and a translated one read back (PUT, a draft only, all or nothing): the services of the
console's translations page and the `translations` command."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.parsers import BaseParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from studyapp.api.data_views import StudyScoped
from studyapp.api.errors import Conflict, DetailSerializer
from studyapp.api.params import SLUG
from studyapp.api.permissions import perms
from studyapp.api.schema import ERROR_BODY_SCHEMA
from studyapp.definition.errors import StudyError, StudyFrozen
from studyapp.definition.languages import page_languages
from studyapp.studies import translation_files

PO_TYPE = "text/x-gettext-translation"
LANG = OpenApiParameter(
    "lang",
    {"type": "string", "enum": list(page_languages())},
    OpenApiParameter.PATH,
    description="One of the study's languages, e.g. ja (404 for another).",
)


class POBodyParser(BaseParser):
    """A PO file sent as the raw body; `translation_files.po_import` decodes and checks it."""

    media_type = PO_TYPE

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        return stream.read() if stream is not None else b""


class TranslationUpload(serializers.Serializer):
    file = serializers.FileField(help_text="The translated PO file.")


class ImportedSerializer(serializers.Serializer):
    language = serializers.CharField()
    changed = serializers.ListField(child=serializers.CharField(), help_text="Message ids.")


class TranslationView(StudyScoped, APIView):
    model_perms = {"get": perms("view_study"), "put": perms("change_study")}
    parser_classes = [MultiPartParser, POBodyParser]

    @extend_schema(
        summary="The study's texts in one of its languages as a PO file (msgid: the text's "
        "id, e.g. texts.consent; #. comment: the default language's text)",
        parameters=[SLUG, LANG],
        responses={(200, PO_TYPE): OpenApiResponse(OpenApiTypes.STR, description="PO file")},
    )
    def get(self, request: Request, slug: str, lang: str) -> Any:
        try:
            text = translation_files.po_export(self.study, lang)
        except StudyError as exc:
            raise NotFound(str(exc)) from None
        response = HttpResponse(text, content_type=f"{PO_TYPE}; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{self.study.slug}-{lang}.po"'
        return response

    @extend_schema(
        summary="Read a translated PO file into a draft study (all or nothing)",
        description="Send the file as the multipart field `file` or as the raw body with "
        f"`Content-Type: {PO_TYPE}`. Unknown message ids, a placeholder dropped or added, "
        "or an option list translated in part refuse the whole file (400, each problem "
        "named); untranslated and fuzzy entries leave the text as it is.",
        parameters=[SLUG, LANG],
        request={"multipart/form-data": TranslationUpload, PO_TYPE: OpenApiTypes.STR},
        responses={
            200: ImportedSerializer,
            400: OpenApiResponse(ERROR_BODY_SCHEMA, description="{detail, problems}"),
            409: OpenApiResponse(DetailSerializer, description="The study is not a draft."),
        },
    )
    def put(self, request: Request, slug: str, lang: str) -> Response:
        study = self.study  # a study the caller cannot see is a 404 before the body is read
        data = self._po_bytes(request)
        try:
            done = translation_files.po_import(study, lang, data)
        except StudyFrozen as exc:
            raise Conflict(str(exc)) from None
        except translation_files.TranslationRejected as exc:
            return Response({"detail": str(exc), "problems": exc.problems}, status=400)
        except StudyError as exc:
            raise NotFound(str(exc)) from None
        return Response({"language": done.language, "changed": done.changed})

    @staticmethod
    def _po_bytes(request: Request) -> bytes:
        if isinstance(request.data, bytes):
            return request.data
        if (request.content_type or "").startswith(PO_TYPE):
            return b""  # an empty body never reaches the parser
        upload = request.FILES.get("file")
        if upload is None:
            raise ValidationError(
                {"file": [f"Send the PO file as the multipart field 'file' or a {PO_TYPE} body."]}
            )
        return upload.read()

    def perform_content_negotiation(self, request: Request, force: bool = False) -> Any:
        # the PO file bypasses renderers; errors are JSON whatever the Accept header says
        return super().perform_content_negotiation(request, force=True)
