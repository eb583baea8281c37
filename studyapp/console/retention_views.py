"""The console's data-protection page of a study: its retention rules in words (and what a
combination of them means), what the rules make due now, the exports written to disk and
when their files are due, and the deletion receipts (also as a CSV download). A researcher
who may change the study can apply the due deletions at once instead of waiting for the
daily run; the receipts then name them.

Staff only, for studies `access.can_access` allows; reading needs the monitor's
permissions (receipts describe participants' data), applying the change permission.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.admin import site
from django.contrib.admin.views.decorators import staff_member_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods

from analysis.csv_safety import neutralise
from studyapp.console.views import study_or_404
from studyapp.definition.retention import (
    CLASS_WORDS,
    DATA_CLASSES,
    Retention,
    retention_notes,
    retention_of,
)
from studyapp.models import DeletionReceipt, ExportRecord, Study
from studyapp.retention import export_files, service
from studyapp.retention.receipts import receipts_frame
from studyapp.studies import access

CHANGE_PERM = "studyapp.change_study"
#: receipts shown on the page (all of them are in the CSV)
SHOWN = 200


def _rules(study: Study) -> list[dict[str, str]]:
    retention = retention_of(study.retention)
    return [
        {
            "key": name,
            "title": str(Retention.model_fields[name].title),
            "holds": str(Retention.model_fields[name].description),
            "rule": getattr(retention, name).words(),
        }
        for name in DATA_CLASSES
    ]


def _exports(study: Study) -> list[dict[str, Any]]:
    rules = retention_of(study.retention).rules()
    out = []
    for record in ExportRecord.objects.filter(study=study)[:50]:
        due = export_files.due_at(record, rules, study)
        out.append(
            {"record": record, "due_at": due[0] if due else None, "rule": due[1] if due else ""}
        )
    return out


def _apply(request: HttpRequest, study: Study) -> None:
    if not access.may(request.user, CHANGE_PERM):
        raise PermissionDenied(f"missing permissions: {CHANGE_PERM}")
    receipts = service.study_retention_apply(
        study=study, now=timezone.now(), by=DeletionReceipt.By.RESEARCHER, by_user=request.user
    )
    if not receipts:
        messages.info(request, f"{study.slug}: nothing is due; nothing was deleted.")
    for r in receipts:
        what = CLASS_WORDS.get(r.data_class, "export files")
        messages.success(
            request, f"Deleted {what}: {r.participants} participant(s), {r.rows} row(s) ({r.rule})."
        )


@never_cache
@require_http_methods(["GET", "POST"])
@staff_member_required
def data_protection_page(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_or_404(request, slug, access.MONITOR_PERMS)
    if request.method == "POST":
        _apply(request, study)
        return redirect("console-data-protection", slug=study.slug)
    now = timezone.now()
    receipts = DeletionReceipt.objects.filter(study=study).select_related("by_user")
    context: dict[str, Any] = {
        **site.each_context(request),
        "title": f"Data protection: {study.slug}",
        "study": study,
        "rules": _rules(study),
        "notes": retention_notes(retention_of(study.retention)),
        "due": service.retention_preview(study, now),
        "exports": _exports(study),
        "receipts": receipts[:SHOWN],
        "n_receipts": receipts.count(),
        "shown": SHOWN,
        "can_change": access.may(request.user, CHANGE_PERM),
        "now": now,
    }
    return TemplateResponse(request, "console/data_protection.html", context)


@never_cache
@require_GET
@staff_member_required
def receipts_csv(request: HttpRequest, slug: str) -> HttpResponse:
    """The study's receipts as `deletion_receipts.csv` (the export's file)."""
    study = study_or_404(request, slug, access.MONITOR_PERMS)
    text = neutralise(receipts_frame(study)).to_csv(index=False)
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-deletion_receipts.csv"'
    response["X-Content-Type-Options"] = "nosniff"
    return response
