"""Console pages beside the admin: a study's monitor (page and JSON) and its export ZIP.

Staff only (the admin's login) and only for studies `access.can_access` allows; any other
study is a 404, so a researcher cannot probe which slugs exist. On a study they can see,
they also need the model permissions the API asks for the same figures or files
(`access.MONITOR_PERMS`, `access.EXPORT_PERMS`), else 403.
"""

from __future__ import annotations

from django.contrib.admin import site
from django.contrib.admin.views.decorators import staff_member_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from studyapp.console.charts import monitor_charts
from studyapp.export import export_zip_stream
from studyapp.integrity.monitor import integrity_monitor
from studyapp.models import Participant, Study
from studyapp.studies import access
from studyapp.studies.monitor import study_monitor

#: how often the monitor page asks for fresh figures
REFRESH_SECONDS = 5


def study_or_404(request: HttpRequest, slug: str, perms: tuple[str, ...]) -> Study:
    """The researcher's study by slug: 404 when they may not see it, 403 naming the missing
    permissions."""
    study = access.studies_for(request.user).filter(slug=slug).first()
    if study is None:
        raise Http404("no such study")
    missing = [p for p in perms if not access.may(request.user, p)]
    if missing:
        raise PermissionDenied(f"missing permissions: {', '.join(missing)}")
    return study


def _flag(request: HttpRequest, name: str) -> bool:
    value = request.GET.get(name, "")
    if value not in ("", "0", "1", "on", "true", "false"):
        raise Http404(f"{name}: expected 1 or 0")
    return value in ("1", "on", "true")


@never_cache
@require_GET
@staff_member_required
def monitor_page(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_or_404(request, slug, access.MONITOR_PERMS)
    figures = study_monitor(study)
    states = [(value, label) for value, label in Participant.State.choices]
    return TemplateResponse(
        request,
        "console/monitor.html",
        {
            **site.each_context(request),
            "title": f"Monitor: {study.slug}",
            "study": study,
            "m": figures,
            "charts": monitor_charts(figures, study),
            "integrity": integrity_monitor(study),
            "states": states,
            "conditions": list(figures["by_condition"].items()),
            "refresh_seconds": REFRESH_SECONDS,
        },
    )


@never_cache
@require_GET
@staff_member_required
def monitor_json(request: HttpRequest, slug: str) -> JsonResponse:
    return JsonResponse(study_monitor(study_or_404(request, slug, access.MONITOR_PERMS)))


@never_cache
@require_GET
@staff_member_required
def export_zip(request: HttpRequest, slug: str) -> StreamingHttpResponse:
    study = study_or_404(request, slug, access.EXPORT_PERMS)
    panel, text, test = _flag(request, "panel"), _flag(request, "text"), _flag(request, "test")
    with_r = _flag(request, "r")  # labelled .rds / .sav and analysis.R (ticked in the form)
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    response = StreamingHttpResponse(
        export_zip_stream(
            study, with_panel_ids=panel, with_text=text, with_test=test, with_r=with_r
        ),
        content_type="application/zip",
    )
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-export-{stamp}.zip"'
    response["X-Content-Type-Options"] = "nosniff"
    return response
