"""Who may see and change a study: its owner, the researchers it is shared with, superusers.

One rule for the admin console and the REST API, so the two cannot drift apart. Plain
queryset filtering rather than a per-object permission table (django-guardian): access is
decided by two columns of the study itself, and every list must be filtered anyway.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet

from studyapp.models import Study


def is_researcher(user: Any) -> bool:
    """An active staff account; participants never have accounts."""
    return bool(user and user.is_authenticated and user.is_active and user.is_staff)


def studies_for(user: Any) -> QuerySet[Study]:
    """The studies `user` may see: all for a superuser, owned or shared for a researcher."""
    if not is_researcher(user):
        return Study.objects.none()
    if user.is_superuser:
        return Study.objects.all()
    return Study.objects.filter(Q(owner=user) | Q(shared_with=user)).distinct()


def may(user: Any, perm: str) -> bool:
    """`user` holds `perm` ("studyapp.view_study"); as in the admin, the change permission
    on a model also lets one view it."""
    if user.has_perm(perm):
        return True
    app, _, codename = perm.partition(".")
    if codename.startswith("view_"):
        return user.has_perm(f"{app}.change_{codename.removeprefix('view_')}")
    return False


#: reading a study's monitor figures (console page, JSON and API)
MONITOR_PERMS = ("studyapp.view_study", "studyapp.view_participant")
#: reading a study's export: view on every model the ZIP holds (console and API)
EXPORT_PERMS = tuple(
    f"studyapp.view_{model}"
    for model in ("study", "participant", "profile", "recourse", "evaluation", "pagevisit")
)


def can_access(user: Any, study: Study) -> bool:
    return studies_for(user).filter(pk=study.pk).exists()


def is_owner(user: Any, study: Study) -> bool:
    """Owners (and superusers) may share, delete and duplicate; shared researchers may not."""
    return is_researcher(user) and (user.is_superuser or study.owner_id == user.pk)
