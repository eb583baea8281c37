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


def can_access(user: Any, study: Study) -> bool:
    return studies_for(user).filter(pk=study.pk).exists()


def is_owner(user: Any, study: Study) -> bool:
    """Owners (and superusers) may share, delete and duplicate; shared researchers may not."""
    return is_researcher(user) and (user.is_superuser or study.owner_id == user.pk)
