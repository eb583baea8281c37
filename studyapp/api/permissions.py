"""Who may call the API, on top of `studyapp.access` (the one visibility rule).

Anonymous callers get 401 (DRF, from the default IsAuthenticated), authenticated accounts
that are not researchers get 403 here, and a study the caller cannot see is a 404 from
`visible_study` (its existence is not leaked). Owner-only actions answer 403 to a
researcher the study is shared with: they can see it, so hiding it would be a lie.
"""

from __future__ import annotations

from typing import Any

from django.http import Http404
from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import BasePermission

from studyapp.models import Study
from studyapp.studies import access


class IsResearcher(BasePermission):
    """Active staff accounts only; participants never have accounts."""

    message = "This API is for researchers (staff accounts) only."

    def has_permission(self, request: Any, view: Any) -> bool:
        return access.is_researcher(request.user)


def visible_study(user: Any, slug: str) -> Study:
    """The study `slug` if `user` may see it, else 404 (whether or not it exists)."""
    study = access.studies_for(user).filter(slug=slug).first()
    if study is None:
        raise Http404("No study with this slug among the studies you can see.")
    return study


def require_owner(user: Any, study: Study, action: str) -> None:
    """Refuse `action` unless `user` owns the study (or is a superuser)."""
    if not access.is_owner(user, study):
        raise PermissionDenied(f"Only the study's owner may {action}.")
