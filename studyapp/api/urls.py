"""Routes of the REST API, mounted under /api/."""

from __future__ import annotations

urlpatterns: list = []
