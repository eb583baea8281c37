"""What a locked-out login sees (django-axes' AXES_LOCKOUT_CALLABLE): a page on the admin's
login, JSON on the API's token endpoint; both say why, for how long, and who can unlock."""

from __future__ import annotations

from typing import Any

from axes.helpers import get_cool_off
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

#: the status the lockout answers with: too many requests, as the token throttle
STATUS = 429


def lockout_message(request: HttpRequest) -> tuple[str, int | None]:
    """The sentence to show and the seconds until the next attempt (None: until unlocked)."""
    from django.conf import settings

    cool_off = get_cool_off(request)
    limit = settings.AXES_FAILURE_LIMIT
    head = f"Too many failed logins ({limit}) for this account from your address."
    unlock = "or ask an administrator to unlock it (manage.py axes_reset_username USERNAME)."
    if cool_off is None:
        return f"{head} Logging in is locked: ask an administrator to unlock it.", None
    seconds = int(cool_off.total_seconds())
    minutes = max(1, round(seconds / 60))
    return f"{head} Try again in {minutes} minute(s), {unlock}", seconds


def lockout_response(
    request: HttpRequest, original_response: Any = None, credentials: Any = None
) -> HttpResponse:
    message, retry_after = lockout_message(request)
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse({"detail": message}, status=STATUS)
    else:
        response = render(
            request,
            "admin/locked_out.html",
            {"title": "Login locked", "message": message},
            status=STATUS,
        )
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    return response
