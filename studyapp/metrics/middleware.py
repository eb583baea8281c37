"""Request latency by page: one histogram sample per request, labelled by the URL's name.

The label is the resolved view's name (``participant``, ``console:study``...), never the raw
path, so participant codes do not become series. The cost is a clock read and one write to
this process's memory-mapped sample file; nothing touches the database.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from studyapp.metrics.store import REQUEST_SECONDS

#: the label of a request no URL pattern matched (404s, probes for random paths)
UNMATCHED = "<unmatched>"
#: methods kept as labels; anything else is "other" (a client cannot add series at will)
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def view_label(request: HttpRequest) -> str:
    match = getattr(request, "resolver_match", None)
    if match is None:
        return UNMATCHED
    return match.view_name or UNMATCHED


class RequestLatencyMiddleware:
    """Put first in MIDDLEWARE so the time includes every other middleware."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        t0 = time.perf_counter()
        response = self.get_response(request)
        REQUEST_SECONDS.labels(
            view_label(request),
            request.method if request.method in METHODS else "other",
            f"{response.status_code // 100}xx",
        ).observe(time.perf_counter() - t0)
        return response
