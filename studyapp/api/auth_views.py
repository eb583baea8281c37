"""Getting a token, and the API's own description (OpenAPI schema, Swagger UI) — the
description is for researchers too: it lists what the platform stores."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle

from studyapp.api.permissions import IsResearcher, is_api_researcher
from studyapp.api.schema import ApiSchema
from studyapp.config.lockout import lockout_response
from studyapp.studies import access


class ResearcherTokenView(ObtainAuthToken):
    """POST username + password: the account's token (created on first use).

    Only researcher accounts (staff with study permissions) get one; a wrong password and
    any other account answer 400, as DRF's own view does for bad credentials.
    """

    authentication_classes: list = []
    permission_classes = [AllowAny]
    # password guessing: a few attempts a minute per client address (STUDYAPP_TOKEN_RATE);
    # the login throttle (django-axes) also counts failures per address and username
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "token"
    schema = ApiSchema()
    schema_refusals = ("400", "429")

    @extend_schema(summary="A token for a researcher account (username + password)")
    def post(self, request: Request, *args: Any, **kwargs: Any) -> HttpResponse:
        serializer = self.get_serializer(data=request.data)
        if not serializer.is_valid():
            if getattr(request, "axes_locked_out", False):  # the login throttle refused
                return lockout_response(request)
            raise ValidationError(serializer.errors)
        user = serializer.validated_data["user"]
        if not access.is_researcher(user):
            raise ValidationError(
                {"non_field_errors": ["This account is not a researcher (staff) account."]}
            )
        if not is_api_researcher(user):
            raise ValidationError(
                {"non_field_errors": ["This account has no permission on studies yet."]}
            )
        token, _ = Token.objects.get_or_create(user=user)
        return Response({"token": token.key})


class SchemaView(SpectacularAPIView):
    """The OpenAPI 3 schema (JSON with ?format=json, YAML by default)."""

    permission_classes = [IsAuthenticated, IsResearcher]


class DocsView(SpectacularSwaggerView):
    """Swagger UI over the schema; its JS and CSS are served from our static files (the
    drf-spectacular sidecar), so the page works offline."""

    permission_classes = [IsAuthenticated, IsResearcher]
