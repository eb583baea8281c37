"""`/healthz`: the cheap answer a load balancer's health check asks every node for.

Answered before any other middleware, so a check costs no session, no database, no host or
HTTPS redirect (a balancer checks the nodes over plain HTTP by their addresses): it says
the process takes requests. ``/healthz?db=1`` also runs ``SELECT 1`` on the database (through
PgBouncer where there is one) and answers 503 when that fails: for a deployment's own
readiness check, not for the balancer's, which would take every node out at once when the
database is away and leave participants a balancer's bare error instead of the app's page.
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse

PATH = "/healthz"


def _database_ok() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            return cursor.fetchone() == (1,)
    except DatabaseError:
        return False


class HealthMiddleware:
    """First in MIDDLEWARE: `/healthz` never reaches the rest of the stack."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path_info != PATH:
            return self.get_response(request)
        if request.GET.get("db") and not _database_ok():
            return HttpResponse("database unreachable\n", status=503, content_type="text/plain")
        return HttpResponse("ok\n", content_type="text/plain")
