"""What every coding page shares: the study (404 unless the researcher may open it), the
model permission it needs (403 without), and rendering inside the admin's frame."""

from __future__ import annotations

from typing import Any

from django.contrib.admin import site
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from studyapp.coding.selectors import all_finished, is_blind, is_coder
from studyapp.models import Study
from studyapp.studies import access


def study_for(request: HttpRequest, slug: str, *perms: str) -> Study:
    """The study, if `request.user` may open it (else 404) and has every permission
    (`studyapp_coding.<codename>`; else 403)."""
    study = access.studies_for(request.user).filter(slug=slug).first()
    if study is None:
        raise Http404("no such study")
    need(request, *perms)
    return study


def need(request: HttpRequest, *perms: str) -> None:
    for perm in perms:
        if not request.user.has_perm(f"studyapp_coding.{perm}"):
            raise PermissionDenied(f"needs the permission {perm}")


def form_error(form: Any) -> str:
    """A bound form's errors in one line, each naming its field."""
    return "; ".join(
        f"{name}: {' '.join(errs)}" if name != "__all__" else " ".join(errs)
        for name, errs in form.errors.items()
    )


def render(
    request: HttpRequest,
    study: Study,
    template: str,
    title: str,
    context: dict[str, Any],
    *,
    error: str = "",
    status: int = 200,
) -> HttpResponse:
    """A page in the admin's frame; `error` (a refused input) is shown at the top."""
    user = request.user
    return TemplateResponse(
        request,
        template,
        {
            **site.each_context(request),
            "title": title,
            "study": study,
            "error": error,
            "is_coder": is_coder(user, study),
            "blind": is_blind(user, study),
            "all_finished": all_finished(study),
            **context,
        },
        status=status,
    )
