"""The admin's own study pages: setup ("Add study"), pool upload with preview and confirm,
state buttons, duplicate. Thin: validate with a form, call a study service (`study_setup`,
`pool`, `services`, `duplicate`), render or redirect. Wrapped by `admin_site.admin_view`
(staff login) in `StudyAdmin`.
"""

from __future__ import annotations

import hashlib
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse

from studyapp.console import pending_pools
from studyapp.console.forms import DuplicateForm, PoolUploadForm, StudySetupForm
from studyapp.definition.errors import StudyError
from studyapp.models import Study
from studyapp.studies import (
    access,
    design_check,
    duplicate,
    pool,
    services,
    study_setup,
    text_checks,
    updates,
)

PREVIEW_REJECTED_SHOWN = 200


def free_slug(base: str) -> str:
    slug, n = base[:50], 2
    while Study.objects.filter(slug=slug).exists():
        slug, n = f"{base[:45]}-{n}", n + 1
    return slug


def _page(
    model_admin: Any, request: HttpRequest, name: str, study: Study | None, **extra: Any
) -> TemplateResponse:
    """One of the study admin's own pages, `admin/studyapp/study/<name>`, in the admin's
    frame; a study's page has the study as `original` too, as the admin's change form has."""
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.model._meta,
        "has_view_permission": True,
    }
    if study is not None:
        context.update(study=study, original=study)
    return TemplateResponse(request, f"admin/studyapp/study/{name}", {**context, **extra})


def _study(model_admin: Any, request: HttpRequest, pk: int, *, change: bool = True) -> Study:
    study = model_admin.get_queryset(request).filter(pk=pk).first()
    if study is None:
        raise Http404("no such study")
    allowed = (
        model_admin.has_change_permission(request, study)
        if change
        else model_admin.has_view_permission(request, study)
    )
    if not allowed:
        raise PermissionDenied
    return study


def _change_url(study: Study) -> str:
    return reverse("admin:studyapp_study_change", args=[study.pk])


def study_setup_view(model_admin: Any, request: HttpRequest) -> HttpResponse:
    if not model_admin.has_add_permission(request):
        raise PermissionDenied
    preview = None
    if request.method == "POST":
        form = StudySetupForm(request.POST, request.FILES)
        if form.is_valid():
            data = form.cleaned_data
            try:
                study = study_setup.study_create_from_schema(
                    slug=data["slug"],
                    title=data["title"],
                    schema=data["schema"],
                    owner=request.user,
                    pool=data["pool"],
                    pool_size=data["pool_size"],
                    settings=data["settings"],
                )
                study = form.apply_kind(study)
            except pool.PoolRejected as exc:
                preview = exc.preview
                form.add_error("pool_file", "the pool file has problems (listed below)")
            except StudyError as exc:
                form.add_error(None, str(exc))
            else:
                messages.success(
                    request,
                    f"Study {study.slug} created as a draft ({study.pool_rows:,} pool profiles). "
                    "Set its texts, conditions and codes below, then go live.",
                )
                return redirect(_change_url(study))
    else:
        form = StudySetupForm()
    return _page(
        model_admin,
        request,
        "setup.html",
        None,
        title="Add study",
        form=form,
        preview=_preview_context(preview),
    )


def _preview_context(preview: pool.PoolPreview | None) -> dict[str, Any] | None:
    if preview is None:
        return None
    width = max((len(d) for d in preview.distributions.values()), default=0)
    table = [
        (key, [counts.get(c, "") for c in range(1, width + 1)] if width else [])
        for key, counts in preview.distributions.items()
    ]
    return {
        "p": preview,
        "codes": list(range(1, width + 1)),
        "table": table,
        "rejected": preview.rejected[:PREVIEW_REJECTED_SHOWN],
        "more_rejected": max(0, len(preview.rejected) - PREVIEW_REJECTED_SHOWN),
    }


def _session_key(study: Study) -> str:
    return f"pool-upload-{study.pk}"


def pool_upload_view(model_admin: Any, request: HttpRequest, pk: int) -> HttpResponse:
    study = _study(model_admin, request, pk)
    frozen = "pool" in updates.frozen_parts(study)
    preview = None
    form = PoolUploadForm()
    if request.method == "POST" and frozen:
        messages.error(request, f"Study {study.slug} is {study.state}: its pool is frozen.")
        return redirect(_change_url(study))
    if request.method == "POST" and "confirm" in request.POST:
        return _confirm_pool(request, study)
    if request.method == "POST":
        form = PoolUploadForm(request.POST, request.FILES)
        if form.is_valid():
            f = form.cleaned_data["file"]
            if f.size > pool.MAX_POOL_BYTES:
                form.add_error("file", f"the file is too big ({f.size:,} bytes)")
            else:
                preview = pool.pool_preview(study.schema, f.read())
                if preview.ok:
                    token = pending_pools.put(preview.csv_text)
                    request.session[_session_key(study)] = {
                        "token": token,
                        "sha256": hashlib.sha256(preview.csv_text.encode()).hexdigest(),
                        "name": f.name,
                    }
    pending = request.session.get(_session_key(study)) if preview and preview.ok else None
    return _page(
        model_admin,
        request,
        "pool.html",
        study,
        title=f"Pool of {study.slug}",
        frozen=frozen,
        form=form,
        preview=_preview_context(preview),
        pending=pending,
    )


def _confirm_pool(request: HttpRequest, study: Study) -> HttpResponse:
    pending = request.session.get(_session_key(study))
    token = request.POST.get("token", "")
    data = pending_pools.take(token) if pending and token == pending["token"] else None
    if data is None:
        messages.error(request, "That preview has expired; please upload the file again.")
        return redirect(reverse("admin:studyapp_study_pool", args=[study.pk]))
    request.session.pop(_session_key(study), None)
    if hashlib.sha256(data).hexdigest() != pending["sha256"]:
        messages.error(request, "The previewed file changed on disk; please upload it again.")
        return redirect(reverse("admin:studyapp_study_pool", args=[study.pk]))
    try:
        preview = pool.study_replace_pool(study=study, data=data)
    except StudyError as exc:
        messages.error(request, str(exc))
        return redirect(_change_url(study))
    if not preview.ok:
        messages.error(request, f"Pool not stored: {preview.summary()}")
    else:
        messages.success(
            request, f"Pool of {study.slug} replaced: {preview.rows:,} profiles stored."
        )
    return redirect(_change_url(study))


def state_view(model_admin: Any, request: HttpRequest, pk: int) -> HttpResponse:
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    study = _study(model_admin, request, pk)
    state = request.POST.get("state", "")
    if state not in Study.State.values:
        messages.error(request, f"Unknown state {state!r}.")
    else:
        try:
            services.study_set_state(
                study=study,
                state=state,
                acknowledged=request.POST.getlist("acknowledge"),
                by=request.user,
            )
        except design_check.DesignWarnings as exc:
            # the design check's page lists each warning with a box to acknowledge it
            messages.error(request, str(exc))
            return redirect("console-design-check", slug=study.slug)
        except StudyError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, f"{study.slug} is now {study.state}.")
            if study.state == Study.State.LIVE:
                for warning in text_checks.text_warnings(study):
                    messages.warning(request, warning)
    return redirect(_change_url(study))


def duplicate_view(model_admin: Any, request: HttpRequest, pk: int) -> HttpResponse:
    study = _study(model_admin, request, pk, change=False)
    if not access.is_owner(request.user, study) or not model_admin.has_add_permission(request):
        raise PermissionDenied
    if request.method == "POST":
        form = DuplicateForm(request.POST)
        if form.is_valid():
            try:
                copy = duplicate.study_duplicate(
                    study=study, slug=form.cleaned_data["slug"], owner=request.user
                )
            except StudyError as exc:
                form.add_error("slug", str(exc))
            else:
                messages.success(request, f"{study.slug} duplicated as {copy.slug} (draft).")
                return redirect(_change_url(copy))
    else:
        form = DuplicateForm(initial={"slug": free_slug(f"{study.slug}-copy")})
    return _page(
        model_admin, request, "duplicate.html", study, title=f"Duplicate {study.slug}", form=form
    )
