"""The login throttle's authentication backend (django-axes, settings AXES_*).

django-axes refuses to authenticate without the request, which it needs for the client's
address. Every web login passes one (the admin's login form, DRF's token endpoint); a call
without one is the code's own (Django's test client `login`, a shell), has no address to
count against, and falls through to the model backend unthrottled.
"""

from __future__ import annotations

from typing import Any

from axes.backends import AxesStandaloneBackend


class LoginThrottleBackend(AxesStandaloneBackend):
    def authenticate(self, request: Any, username: Any = None, password: Any = None, **kw: Any):  # type: ignore[no-untyped-def]
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kw)
