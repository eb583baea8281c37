"""Routes of the researcher console, mounted under /console/."""

from __future__ import annotations

urlpatterns: list = []
