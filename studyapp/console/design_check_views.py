"""The design check's console page (and its JSON): the latest check's tables and chart, a
form to run a new one, the draft's method fits with a "Fit methods now" button, preview
links per condition, the pilot's figures, and going live with each warning acknowledged.

Staff only, for studies `access.can_access` allows (any other is a 404); reading needs the
monitor's permissions, running a check or fitting the change permission on studies.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.admin import site
from django.contrib.admin.views.decorators import staff_member_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods

from studyapp.console.design_check_chart import design_check_chart
from studyapp.console.views import study_or_404
from studyapp.definition.errors import StudyError
from studyapp.generation import method_fitting, stored_fits
from studyapp.models import Study
from studyapp.participation import preview
from studyapp.studies import access, design_check, monitor_methods, tasks

CHANGE_PERM = "studyapp.change_study"
#: seconds between two looks at a running check
REFRESH_SECONDS = 2


def _int(value: str, name: str, default: int | None) -> int | None:
    value = (value or "").strip()
    if not value:
        return default
    try:
        return int(value)
    except ValueError:
        raise StudyError(f"{name}: a whole number is needed, got {value!r}") from None


def _post(request: HttpRequest, study: Study) -> None:
    if not access.may(request.user, CHANGE_PERM):
        raise PermissionDenied(f"missing permissions: {CHANGE_PERM}")
    action = request.POST.get("action", "")
    try:
        if action == "run":
            check = tasks.design_check_queue(
                study=study,
                sample_size=_int(request.POST.get("sample_size", ""), "sample_size", 500),
                sample_source=request.POST.get("sample_source", "pool"),
                seed=_int(request.POST.get("seed", ""), "seed", None),
                by=request.user,
            )
            messages.success(request, f"Design check {check.pk} queued.")
        elif action == "fit":
            rows = method_fitting.fits_for_draft(study=study)
            messages.success(
                request,
                f"{len(rows)} fit(s) of {study.slug}: " + ", ".join(r.strategy for r in rows)
                if rows
                else f"{study.slug}: its designs need no fit.",
            )
        else:
            messages.error(request, f"Unknown action {action!r}.")
    except StudyError as exc:
        messages.error(request, str(exc))


def _sources(request: HttpRequest, study: Study) -> list[str]:
    """Where a check may draw its profiles: the pool, or a pool-collection study's answers."""
    collections = access.studies_for(request.user).filter(
        kind="pool_collection", schema_hash=study.schema_hash
    )
    return ["pool", *collections.order_by("slug").values_list("slug", flat=True)]


@never_cache
@require_http_methods(["GET", "POST"])
@staff_member_required
def design_check_page(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_or_404(request, slug, access.MONITOR_PERMS)
    if request.method == "POST":
        _post(request, study)
        return redirect("console-design-check", slug=study.slug)
    summary = design_check.check_summary(study, design_check.latest_check(study))
    current = design_check.current_check(study)
    can_change = access.may(request.user, CHANGE_PERM)
    context: dict[str, Any] = {
        **site.each_context(request),
        "title": f"Design check: {study.slug}",
        "study": study,
        "check": summary,
        "is_current": current is not None and summary is not None and current.pk == summary["id"],
        "warnings": design_check.check_warnings(study, current) if current else [],
        "chart": design_check_chart(summary),
        "fits": list(
            stored_fits.current_rows(study).values("strategy", "state", "progress", "message")
        ),
        "previews": preview.preview_links(study),
        "pilot": monitor_methods.method_figures(study, with_test=True),
        "sources": _sources(request, study),
        "can_change": can_change,
        "can_go_live": can_change and study.state in (Study.State.DRAFT, Study.State.CLOSED),
        "refresh_seconds": REFRESH_SECONDS,
        "default_sample": design_check.SAMPLE_SIZE,
    }
    return TemplateResponse(request, "console/design_check.html", context)


@never_cache
@require_GET
@staff_member_required
def design_check_json(request: HttpRequest, slug: str) -> JsonResponse:
    """The latest check as `check_summary` gives it (null: none yet)."""
    study = study_or_404(request, slug, access.MONITOR_PERMS)
    summary = design_check.check_summary(study, design_check.latest_check(study))
    return JsonResponse({"check": summary})
