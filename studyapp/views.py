"""Thin views: find the participant, validate the form, call the page's service, redirect."""

from __future__ import annotations

import re

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods

from . import selectors, services
from .models import Study
from .pages import is_known_key, page_for, page_rank

#: query parameters that carry a recruitment panel's id, first match wins
RECRUITMENT_PARAMS = ("PROLIFIC_PID", "participant_label", "pid")
_RECRUITMENT_ID = re.compile(r"^[A-Za-z0-9_.\-]{1,100}$")


def _problem(request: HttpRequest, message: str, status: int) -> HttpResponse:
    return render(request, "studyapp/problem.html", {"message": message}, status=status)


@require_GET
def index(request: HttpRequest) -> HttpResponse:
    studies = Study.objects.filter(state=Study.State.LIVE).order_by("title")
    return render(request, "studyapp/index.html", {"studies": studies})


@never_cache
@require_GET
def start(request: HttpRequest, slug: str) -> HttpResponse:
    study = selectors.study_get_live(slug=slug)
    if study is None:
        return _problem(request, "This study link is not open. Please check the link.", 404)
    recruitment_id = ""
    for name in RECRUITMENT_PARAMS:
        if name in request.GET:
            recruitment_id = request.GET[name].strip()
            if not _RECRUITMENT_ID.match(recruitment_id):
                return _problem(
                    request,
                    f"The {name} in this link is not valid (1-100 letters, digits, '_', '-', '.').",
                    400,
                )
            break
    if recruitment_id:
        existing = study.participants.filter(recruitment_id=recruitment_id).first()
        if existing is not None:  # the same panel member again: resume, do not start anew
            return redirect("participant", code=existing.code)
    participant = services.participant_start(study=study, recruitment_id=recruitment_id)
    return redirect("participant", code=participant.code)


@never_cache
@require_http_methods(["GET", "POST"])
def participant_page(request: HttpRequest, code: str) -> HttpResponse:
    participant = selectors.participant_get(code=code)
    if participant is None:
        return _problem(
            request, "This participant link is not valid. Please use the link you were given.", 404
        )
    page = page_for(participant)
    if request.method == "POST":
        submitted = request.POST.get("page", "")
        if submitted != page.key:
            if is_known_key(submitted) and page_rank(submitted) < page_rank(page.key):
                messages.warning(
                    request,
                    "That page was already submitted; your stored answers are kept. "
                    "Please continue here.",
                )
            elif is_known_key(submitted):
                messages.warning(request, "That page is not open yet; nothing was stored.")
            else:
                messages.error(
                    request, "The form was altered and could not be used; nothing was stored."
                )
            return redirect("participant", code=code)
        form = page.form(request.POST)
        if form is None:
            messages.warning(request, "There is nothing to submit on this page.")
            return redirect("participant", code=code)
        if not form.is_valid():
            context = {"page": page, "form": form, "participant": participant, **page.context()}
            return render(request, page.template, context, status=400)
        try:
            page.submit(form)
        except services.StaleSubmission as exc:
            messages.warning(request, str(exc))
        except services.FlowError as exc:
            messages.error(request, str(exc))
        return redirect("participant", code=code)
    if page.records_visit:
        services.page_visit_enter(participant=participant, page=page.key)
    context = {
        "page": page,
        "form": page.initial_form(),
        "participant": participant,
        **page.context(),
    }
    return render(request, page.template, context)


@never_cache
@require_GET
def participant_status(request: HttpRequest, code: str) -> JsonResponse:
    participant = selectors.participant_get(code=code)
    if participant is None:
        return JsonResponse({"error": "unknown participant link"}, status=404)
    progress = selectors.participant_progress(participant=participant)
    progress["next"] = reverse("participant", kwargs={"code": code})
    return JsonResponse(progress)
