"""Middleware that participant URLs pass by: sessions, users and history are the console's,
the admin's and the API's, never a participant's.

A participant is known by the code in their URL (``/p/<code>/``) and arrives through the
study link (``/s/<slug>/``); neither reads a session or a user,
and a participant request makes no version a researcher could be credited with. Each class
here is one of those middleware that runs for every other URL, so the console and the
admin keep sessions, login and messages as before, while a participant request skips them:
no session cookie to read, no lazy user to build, no context to set. django-axes' middleware
stays as it is for every URL (its system check asks for it by name); on a request that logs
no one in it reads one attribute.

Kept for participant URLs, unwrapped in `settings.MIDDLEWARE`: the security headers
(`SecurityMiddleware`), `CommonMiddleware`, the CSRF check (its token is a cookie, not a
session), `X-Frame-Options` and the static files. Their flash messages ("That page was
already submitted...", which the redirect of Post/Redirect/Get carries to the next page)
live in a signed cookie (`MessageMiddleware` below) instead of the session fallback.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.middleware import AuthenticationMiddleware as _Authentication
from django.contrib.messages.middleware import MessageMiddleware as _Message
from django.contrib.messages.storage.cookie import CookieStorage
from django.contrib.sessions.middleware import SessionMiddleware as _Session
from django.http import HttpRequest, HttpResponse

from studyapp.prereg.history import ActorMiddleware as _Actor

#: the URL prefixes of the participant pages (`studyapp.config.urls`): the study link and
#: the participant's own pages (page, status poll, withdrawal)
PARTICIPANT_PREFIXES = ("/s/", "/p/")

#: the hooks Django's handler takes from a middleware besides calling it; skipping the call
#: would not skip them, so a middleware with one is not skipped this way
_HOOKS = ("process_view", "process_exception", "process_template_response")


def is_participant_path(path_info: str) -> bool:
    return path_info.startswith(PARTICIPANT_PREFIXES)


class _SkippedForParticipants:
    """Mixed in before a middleware class: that middleware runs except for participant URLs,
    which go straight on. A subclass of the original, so Django's and the admin's checks
    that ask for the original find it."""

    async_capable = False  # a plain call: Django adapts it if the stack is ever async
    get_response: Callable[[HttpRequest], HttpResponse]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        hooks = [h for h in _HOOKS if hasattr(cls, h)]
        if hooks:
            raise TypeError(f"{cls.__name__} has {hooks}, which a participant URL would still run")

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if is_participant_path(request.path_info):
            return self.get_response(request)
        return super().__call__(request)  # type: ignore[misc,no-any-return]


class SessionMiddleware(_SkippedForParticipants, _Session):
    pass


class AuthenticationMiddleware(_SkippedForParticipants, _Authentication):
    pass


class ActorMiddleware(_SkippedForParticipants, _Actor):
    pass


class MessageMiddleware(_Message):
    """Django's, with a participant's messages in a signed cookie: the default storage falls
    back to the session, which participant requests do not load."""

    def process_request(self, request: HttpRequest) -> None:
        if is_participant_path(request.path_info):
            request._messages = CookieStorage(request)  # type: ignore[attr-defined]
        else:
            super().process_request(request)
