"""The coding overview (codebook, coders) and the answers page where coders code.

Model permissions of `studyapp_coding` decide who may do what: view_code to open the
coding, add_code to extend the codebook, add_coderassignment to assign coders, view_coding
to browse answers, add_coding to code them (and edit or undo their own codings),
change_code and delete_code to edit and delete codes; add_coderassignment also sets the
study's coding settings. A refused input re-renders the page with its message and status
400; nothing is changed.
"""

from __future__ import annotations

import io
from typing import Any
from urllib.parse import urlencode

import pandas as pd
from django.contrib.admin.views.decorators import staff_member_required as staff_only
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from studyapp.coding import answer_services, browse, services
from studyapp.coding.forms import (
    PLAN_FIELDS,
    RECOURSE_FIELDS,
    AssignForm,
    CodebookUploadForm,
    CodeEditForm,
    CodeForm,
    CodingForm,
    FilterForm,
    SettingsForm,
)
from studyapp.coding.models import Code, CodeChange, CoderAssignment, Coding
from studyapp.coding.page import form_error, need, render, study_for
from studyapp.coding.selectors import hides_plan, hides_recourse
from studyapp.models import Study

PER_PAGE = 50


def _codebook_rows(data: bytes) -> list[dict[str, str]]:
    try:
        frame = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False, encoding="utf-8")
    except UnicodeDecodeError:
        raise services.CodingRefused("the codebook file is not UTF-8 text") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise services.CodingRefused(f"the codebook file is not a readable CSV ({exc})") from None
    if "code" not in frame.columns:
        raise services.CodingRefused("the codebook file needs a 'code' column")
    return frame.to_dict("records")


def _settings_form(study: Study) -> SettingsForm:
    current = services.settings_of(study)
    return SettingsForm(study, initial={"blind": current.blind, "show_plan": current.show_plan,
                                        "coded_fields": current.fields})  # fmt: skip


def _overview(request: HttpRequest, study: Study, *, error: str = "", status: int = 200,
              forms: dict[str, Any] | None = None) -> HttpResponse:  # fmt: skip
    counts = {
        a.coder_id: Coding.objects.filter(study=study, coder_id=a.coder_id).count()
        for a in CoderAssignment.objects.filter(study=study)
    }
    assignments = [
        (a, counts.get(a.coder_id, 0))
        for a in CoderAssignment.objects.filter(study=study).select_related("coder")
    ]
    mine = next((a for a, _ in assignments if a.coder_id == request.user.pk), None)
    return render(
        request, study, "coding/overview.html", f"Coding: {study.slug}",
        {
            "codes": Code.objects.filter(study=study),
            "assignments": assignments,
            "mine": mine,
            "code_form": CodeForm(),
            "upload_form": CodebookUploadForm(),
            "assign_form": AssignForm(),
            "settings_form": _settings_form(study),
            "code_history": CodeChange.objects.filter(study=study).select_related("by"),
            **(forms or {}),
        },
        error=error, status=status,
    )  # fmt: skip


@never_cache
@staff_only
@require_http_methods(["GET", "POST"])
def overview(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_for(request, slug, "view_code")
    if request.method == "GET":
        return _overview(request, study)
    action = request.POST.get("action", "")
    user = request.user
    try:
        if action == "add_code":
            need(request, "add_code")
            form = CodeForm(request.POST)
            if not form.is_valid():
                raise services.CodingRefused(f"codebook not changed: {form_error(form)}")
            services.codes_add(study=study, rows=[form.cleaned_data], by=user)
        elif action == "upload":
            need(request, "add_code")
            upload = CodebookUploadForm(request.POST, request.FILES)
            if not upload.is_valid():
                raise services.CodingRefused(f"codebook not changed: {form_error(upload)}")
            rows = _codebook_rows(upload.cleaned_data["codebook"])
            services.codes_add(study=study, rows=rows, by=user)
        elif action == "assign":
            need(request, "add_coderassignment")
            assign = AssignForm(request.POST)
            if not assign.is_valid():
                raise services.CodingRefused(f"no coder assigned: {form_error(assign)}")
            services.coder_assign(study=study, coder=assign.cleaned_data["coder"], by=user)
        elif action == "finish":
            need(request, "add_coding")
            services.coder_finish(study=study, coder=user)
        elif action == "settings":
            need(request, "add_coderassignment")
            form = SettingsForm(study, request.POST)
            if not form.is_valid():
                raise services.CodingRefused(f"settings not changed: {form_error(form)}")
            d = form.cleaned_data
            services.settings_save(study=study, blind=d["blind"], show_plan=d["show_plan"],
                                   fields=d["coded_fields"], by=user)  # fmt: skip
        elif action in ("edit_code", "delete_code"):
            need(request, "change_code" if action == "edit_code" else "delete_code")
            edit = CodeEditForm(request.POST)
            if not edit.is_valid():
                raise services.CodingRefused(f"codebook not changed: {form_error(edit)}")
            d = edit.cleaned_data
            if action == "edit_code":
                services.code_edit(study=study, name=d["code"], definition=d["definition"],
                                   example=d["example"], by=user)  # fmt: skip
            else:
                services.code_delete(study=study, name=d["code"], by=user)
        else:
            raise services.CodingRefused(f"unknown action {action!r}")
    except services.CodingRefused as exc:
        return _overview(request, study, error=str(exc), status=400)
    return HttpResponseRedirect(request.path)


def _back(request: HttpRequest, query: str) -> str:
    """This page with the filters it was posted from (re-encoded: never another URL)."""
    return request.path + ("?" + urlencode(QueryDict(query), doseq=True) if query else "")


def _coding_post(request: HttpRequest, study: Study) -> None:
    """Save, edit or undo the viewer's coding of one answer, or add a memo to it."""
    form = CodingForm(study, request.POST)
    if not form.is_valid():
        raise services.CodingRefused(f"not coded: {form_error(form)}")
    d = form.cleaned_data
    unit = d["unit"] or answer_services.unit_for(study, d["evaluation"], d["field"])
    action, user = d["action"] or "save", request.user
    if action == "memo":
        need(request, "view_coding")
        answer_services.memo_add(study=study, author=user, unit=unit, text=d["memo"])
        return
    need(request, "add_coding")
    if action == "save":
        answer_services.coding_save(study=study, coder=user, unit=unit, code_names=d["codes"])
    elif action == "edit":
        answer_services.coding_edit(study=study, coder=user, unit=unit, code_names=d["codes"])
    else:
        answer_services.coding_undo(study=study, coder=user, unit=unit)


def hidden_filters(user: object, study: Study) -> tuple[str, ...]:
    """The filters a blind coder is not offered."""
    hidden = RECOURSE_FIELDS if hides_recourse(user, study) else ()
    return hidden + (PLAN_FIELDS if hides_plan(user, study) else ())


@never_cache
@staff_only
@require_http_methods(["GET", "POST"])
def answers(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_for(request, slug, "view_coding")
    error, status = "", 200
    if request.method == "POST":
        try:
            _coding_post(request, study)
            return HttpResponseRedirect(_back(request, request.POST.get("query", "")))
        except services.CodingRefused as exc:
            error, status = str(exc), 400
    filters = FilterForm(study, request.GET or None, hidden=hidden_filters(request.user, study))
    if filters.is_bound and not filters.is_valid():
        error, status = error or f"filters not applied: {form_error(filters)}", 400
        page = browse.page_of(study, request.user, {"field": "-"}, 1, PER_PAGE)
    else:
        data = filters.cleaned_data if filters.is_bound else {}
        page = browse.page_of(study, request.user, data, request.GET.get("page"), PER_PAGE)
    query = request.GET.copy()
    query.pop("page", None)  # the pager's links add their own
    return render(
        request, study, "coding/answers.html", f"Answers: {study.slug}",
        {
            "filters": filters,
            "page": page,
            "n_rows": page.paginator.count,
            "view": browse.view_of(request.user, study),
            "codes": Code.objects.filter(study=study),
            "query": query.urlencode(),
            "here": request.GET.urlencode(),  # where a saved coding returns to
            "can_code": browse.can_code(request.user, study),
        },
        error=error, status=status,
    )  # fmt: skip
