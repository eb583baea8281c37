"""Who may call the API, on top of `studyapp.access` (the one visibility rule).

Anonymous callers get 401 (DRF, from the default IsAuthenticated). Authenticated accounts
that are not researchers get 403 here: a researcher is an active staff account with
permissions on the study app, the same accounts the admin console lets in. Each endpoint
then needs the Django model permissions the admin would ask for the same thing
(`ModelPermissions`, which refuses any endpoint that names none). A study the caller
cannot see is a 404 from `visible_study` (its existence is not leaked). Owner-only
actions answer 403 to a researcher the study is shared with: they can see it, so hiding it
would be a lie.
"""

from __future__ import annotations

import logging
from typing import Any

from django.contrib.auth.models import Permission
from django.http import Http404
from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import BasePermission, DjangoModelPermissions, IsAuthenticated

from studyapp.models import Study
from studyapp.studies import access
from studyapp.studies.access import may

log = logging.getLogger(__name__)

APP = "studyapp"


def is_api_researcher(user: Any) -> bool:
    """An active staff account holding at least one permission on the study app (what the
    admin asks before it shows the app at all)."""
    return access.is_researcher(user) and user.has_module_perms(APP)


class IsResearcher(BasePermission):
    """Active staff accounts with study permissions only; participants never have accounts.
    The refusal says which of the two the account lacks."""

    message = "This API is for researchers (staff accounts with study permissions) only."

    def has_permission(self, request: Any, view: Any) -> bool:
        user = request.user
        if is_api_researcher(user):
            return True
        if access.is_researcher(user):
            self.message = (
                f"{self.message} Your account is staff but holds no permission on the study "
                f"app ({APP}.*); ask your lab's admin to grant the ones you need."
            )
        else:
            self.message = f"{self.message} Your account is not a staff account."
        return False


class ModelPermissions(DjangoModelPermissions):
    """The admin's model permissions, per endpoint.

    DRF's map leaves GET open to any authenticated user; here GET needs the view (or
    change) permission. A view names what each action needs in `model_perms`
    ({action or lower-case method: ("studyapp.view_study", ...)}); a view without an entry
    falls back to its queryset's model and the request method, and one with neither is
    refused, so a new endpoint is closed until it says what it needs.
    """

    perms_map = {
        "GET": ["%(app_label)s.view_%(model_name)s"],
        "HEAD": ["%(app_label)s.view_%(model_name)s"],
        "OPTIONS": [],
        "POST": ["%(app_label)s.add_%(model_name)s"],
        "PUT": ["%(app_label)s.change_%(model_name)s"],
        "PATCH": ["%(app_label)s.change_%(model_name)s"],
        "DELETE": ["%(app_label)s.delete_%(model_name)s"],
    }
    message = "Your account lacks the study permission this needs (ask your lab's admin)."

    def required(self, request: Any, view: Any) -> list[str] | None:
        """The permissions this request needs, or None when the view names none."""
        rules: dict[str, tuple[str, ...]] = getattr(view, "model_perms", {})
        action = getattr(view, "action", None)
        method = request.method.lower()
        if method == "options":
            return []  # the endpoint's description: any researcher (IsResearcher)
        if method == "head":
            method = "get"
        for key in (action, method):
            if key and key in rules:
                return list(rules[key])
        queryset = getattr(view, "queryset", None)
        if queryset is None or request.method not in self.perms_map:
            return None
        return self.get_required_permissions(request.method, queryset.model)

    def has_permission(self, request: Any, view: Any) -> bool:
        user = request.user
        if not user or not user.is_authenticated:
            return False
        perms = self.required(request, view)
        if perms is None:
            log.error("%s names no model permission for %s", type(view).__name__, request.method)
            self.message = "This endpoint names no permission it needs, so it is closed."
            return False
        missing = [p for p in perms if not may(user, p)]
        if missing:
            self.message = missing_permissions_message(missing)
        return not missing


def missing_permissions_message(missing: list[str]) -> str:
    """A 403's detail naming each permission the account lacks, as the admin's user page
    lists it ("studyapp | study | Can change study"), so the lab's admin knows what to grant."""
    names = []
    for perm in missing:
        app, _, codename = perm.partition(".")
        row = (
            Permission.objects.filter(content_type__app_label=app, codename=codename)
            .select_related("content_type")
            .first()
        )
        if row is None:
            names.append(perm)
            continue
        names.append(
            f"{perm} ({row.content_type.app_label} | {row.content_type.model} | {row.name})"
        )
    which, it = ("permission", "it") if len(names) == 1 else ("permissions", "them")
    return (
        f"Your account lacks the {which} this needs: {'; '.join(names)}. Ask your lab's admin "
        f"to grant {it} on your user page in the console."
    )


#: permission classes of every researcher endpoint (anonymous: 401 from the first)
RESEARCHER = [IsAuthenticated, IsResearcher, ModelPermissions]


def perms(*names: str) -> tuple[str, ...]:
    """("view_study",) -> ("studyapp.view_study",)"""
    return tuple(f"{APP}.{n}" for n in names)


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
