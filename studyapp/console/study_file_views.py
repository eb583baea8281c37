"""The console's study file page of a study: download the study file (ZIP), the numbered
versions with who and when and a comparison of any two, registration (freeze now, download
the bundle and its OSF-style Markdown) and the deviation report; and the page that creates a
draft study from an uploaded study file (all or nothing, each problem named by its path).

Staff only, for studies `access.can_access` allows; reading needs view_study, registering
change_study, importing add_study (and a superuser for a file with a model file in it).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.admin import site
from django.contrib.admin.views.decorators import staff_member_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods

from studyapp.console.views import study_or_404
from studyapp.definition.errors import ConfigError, StudyError
from studyapp.models import StudyRegistration
from studyapp.prereg import bundle, deviations, history, study_files
from studyapp.prereg.diff import document_diff
from studyapp.prereg.markdown import registration_markdown
from studyapp.studies import access

VIEW = ("studyapp.view_study",)
CHANGE = "studyapp.change_study"
ADD = "studyapp.add_study"


class ImportForm(forms.Form):
    file = forms.FileField(help_text="The study file's ZIP (as the study file page downloads it).")
    slug = forms.SlugField(max_length=50, help_text="The new study's slug (it appears in links).")


def _versions_compared(request: HttpRequest, study: Any) -> dict[str, Any]:
    a, b = request.GET.get("a", ""), request.GET.get("b", "")
    if not a and not b:
        return {}
    try:
        na, nb = int(a), int(b)
    except ValueError:
        raise Http404("a and b: version numbers") from None
    if not (1 <= na <= 2**31 - 1 and 1 <= nb <= 2**31 - 1):
        raise Http404(f"no version {na if not 1 <= na <= 2**31 - 1 else nb}")
    found = {v.number: v for v in study.versions.filter(number__in=[na, nb])}
    if na not in found or nb not in found:
        raise Http404(f"no version {na if na not in found else nb}")
    return {"a": na, "b": nb, "changes": document_diff(found[na].document, found[nb].document)}


@never_cache
@require_http_methods(["GET", "POST"])
@staff_member_required
def study_file_page(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_or_404(request, slug, VIEW)
    if request.method == "POST":
        if not access.may(request.user, CHANGE):
            raise PermissionDenied(f"missing permissions: {CHANGE}")
        with history.acting_as(request.user):
            reg = bundle.study_register(study=study, by=request.user)
        messages.success(request, f"Registered {study.slug}: SHA-256 {reg.sha256}.")
        return redirect("console-study-file", slug=study.slug)
    history.latest_version(study)
    registration = bundle.first_registration(study)
    context: dict[str, Any] = {
        **site.each_context(request),
        "title": f"Study file and versions: {study.slug}",
        "study": study,
        "versions": study.versions.select_related("by").order_by("-number"),
        "registrations": study.registrations.select_related("by", "version"),
        "deviations": deviations.study_deviations(study) if registration else None,
        "can_change": access.may(request.user, CHANGE),
        **_versions_compared(request, study),
    }
    return TemplateResponse(request, "console/study_file.html", context)


@never_cache
@require_GET
@staff_member_required
def study_file_zip(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_or_404(request, slug, VIEW)
    response = HttpResponse(study_files.study_file_zip(study), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-study.zip"'
    return response


@never_cache
@require_GET
@staff_member_required
def registration_download(request: HttpRequest, slug: str, pk: int, kind: str) -> HttpResponse:
    study = study_or_404(request, slug, VIEW)
    reg = StudyRegistration.objects.filter(study=study, pk=pk).first()
    if reg is None or kind not in ("json", "md"):
        raise Http404("no such registration")
    if kind == "json":
        body, ctype = bundle.bundle_bytes(reg), "application/json"
    else:
        by = reg.by.get_username() if reg.by_id else ""
        text = registration_markdown(
            bundle.bundle_of(reg), reg.sha256, at=reg.at.isoformat(), by=by
        )
        body, ctype = text.encode("utf-8"), "text/markdown; charset=utf-8"
    response = HttpResponse(body, content_type=ctype)
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-registration.{kind}"'
    return response


@never_cache
@require_http_methods(["GET", "POST"])
@staff_member_required
def study_file_import(request: HttpRequest) -> HttpResponse:
    if not access.may(request.user, ADD):
        raise PermissionDenied(f"missing permissions: {ADD}")
    form = ImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            data, files = study_files.files_of_zip(form.cleaned_data["file"].read())
            with history.acting_as(request.user, "imported from a study file (console)"):
                study = study_files.study_file_create(
                    data=data, files=files, slug=form.cleaned_data["slug"],
                    owner=request.user, allow_model_file=request.user.is_superuser,
                )  # fmt: skip
        except ConfigError as exc:
            for message in exc.messages:
                form.add_error("file", message)
        except StudyError as exc:
            form.add_error("slug" if str(exc).startswith("slug") else "file", str(exc))
        else:
            messages.success(request, f"Created draft study {study.slug} from the study file.")
            return redirect("console-study-file", slug=study.slug)
    context = {**site.each_context(request), "title": "Import a study file", "form": form}
    return TemplateResponse(request, "console/study_file_import.html", context)
