"""`/metrics`: the Prometheus text format, for staff or a scraper holding the token.

A scraper sends ``Authorization: Bearer <STUDYAPP_METRICS_TOKEN>``; no token configured,
only a logged-in staff member's browser can read it. Anyone else gets 401 (no credentials)
or 403 (a wrong token, or a user who is not staff): the series name the site's pages and
its load, which is not for participants.
"""

from __future__ import annotations

import hmac
import os

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from studyapp.metrics.live import LiveCollector, SampleFiles

#: the environment variable holding the scraper's bearer token
TOKEN_VAR = "STUDYAPP_METRICS_TOKEN"


def _token_ok(request: HttpRequest) -> bool | None:
    """True: the right token; False: a wrong one (or tokens are off); None: none sent."""
    header = request.headers.get("Authorization", "")
    if not header:
        return None
    scheme, _, given = header.partition(" ")
    expected = os.environ.get(TOKEN_VAR, "")
    if scheme.lower() != "bearer" or not expected:
        return False
    return hmac.compare_digest(given.strip().encode(), expected.encode())


def _is_staff(request: HttpRequest) -> bool:
    user = getattr(request, "user", None)
    return bool(user is not None and user.is_active and user.is_staff)


@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    token = _token_ok(request)
    if not (token or _is_staff(request)):
        user = getattr(request, "user", None)
        anonymous = token is None and (user is None or not user.is_authenticated)
        response = HttpResponse(
            "metrics: send 'Authorization: Bearer <token>' or log in as staff\n"
            if anonymous
            else "metrics: this token or user may not read the metrics\n",
            status=401 if anonymous else 403,
            content_type="text/plain",
        )
        if anonymous:
            response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    registry = CollectorRegistry()
    registry.register(SampleFiles())
    registry.register(LiveCollector())
    return HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)
