"""Thin views: find the participant, validate the form, call the page's service, redirect.

Participant pages render in the participant's language (`translation.override`), one of the
study's, chosen on the welcome page (`language`: link, browser, switch) and kept with them.
"""

from __future__ import annotations

import re

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods

from studyapp.integrity import record as integrity_record
from studyapp.models import Participant, Study
from studyapp.participation import (
    device,
    flow,
    language,
    preview,
    recruitment,
    release,
    selectors,
    waiting,
    withdrawal,
)
from studyapp.participation import services as flow_services


def _problem(request: HttpRequest, message: str, status: int) -> HttpResponse:
    return render(request, "studyapp/problem.html", {"message": message}, status=status)


@require_GET
def index(request: HttpRequest) -> HttpResponse:
    """A neutral page: it lists no study, so a live study is reachable only by its link (the
    panel's, with its ids), never by browsing to the site."""
    return render(request, "studyapp/index.html")


@never_cache
@require_http_methods(["GET", "POST"])
def start(request: HttpRequest, slug: str) -> HttpResponse:
    """GET: the welcome page, which creates nothing (chat apps fetch links for previews);
    POST (its start button): create or resume the participant and go to their page.

    A preview link (`preview`: a researcher's or a bot's signed token) opens a draft study
    too and makes a test participant."""
    params = request.POST if request.method == "POST" else request.GET
    token = params.get(preview.PARAM, "")
    study = selectors.study_get_live(slug=slug)
    if study is None and token:
        study = Study.objects.filter(slug=slug, state=Study.State.DRAFT).first()
    try:
        claims = preview.preview_claims(study, token) if study is not None else None
    except preview.PreviewError as exc:
        return _problem(request, str(exc), 400)
    is_test = claims is not None
    if study is None or (study.state != Study.State.LIVE and not is_test):
        return _problem(request, _("This study link is not open. Please check the link."), 404)
    asked, accept = params.get(language.PARAM, ""), request.headers.get("Accept-Language", "")
    lang = language.chosen_language(study, asked=asked, accept=accept)
    with translation.override(lang):
        try:
            arrival = recruitment.arrival_from(study, params)
        except recruitment.PanelError as exc:
            return _problem(request, str(exc), 400)
        hidden = sorted(arrival.params.items()) + ([(preview.PARAM, token)] if is_test else [])
        if request.method == "GET":
            texts = study.texts_for(language=lang)
            context = {
                "study": study,
                "params": [*hidden, (language.PARAM, lang)],
                "is_test": is_test,
                "texts": texts,
                "title": str(texts.get("title", "")).strip(),
                "languages": language.language_links(study, lang, dict(hidden), request.path),
            }
            return render(request, "studyapp/welcome.html", context)
        try:
            arrived_on = device.device_from(request.POST)
        except ValueError as exc:
            return _problem(request, str(exc), 400)
        try:
            participant = flow_services.participant_start(
                study=study,
                state=flow.first_state(study),
                recruitment_id=arrival.recruitment_id,
                panel=arrival.panel,
                is_test=is_test,
                condition=claims.condition if claims else "",
                language=lang,
                device=arrived_on,
            )
        except flow_services.FlowError as exc:
            return _problem(request, str(exc), 404)
        if claims is not None and claims.skip_delay:
            preview.skip_delay_set(participant)
    return redirect("participant", code=participant.code)


def _participant_or_404(request: HttpRequest, code: str) -> Participant | HttpResponse:
    participant = selectors.participant_get(code=code)
    if participant is None:
        return _problem(
            request,
            _("This participant link is not valid. Please use the link you were given."),
            404,
        )
    return participant


@never_cache
@require_http_methods(["GET", "POST"])
def participant_page(request: HttpRequest, code: str) -> HttpResponse:
    participant = _participant_or_404(request, code)
    if isinstance(participant, HttpResponse):
        return participant
    with translation.override(participant.page_language):
        return _participant_page(request, participant)


def _participant_page(request: HttpRequest, participant: Participant) -> HttpResponse:
    code = participant.code
    # a delayed-release second session past its deadline closes on the next visit too
    participant = release.expire_if_due(participant=participant, now=timezone.now())
    page = flow.page_for(participant)
    if request.method == "POST":
        submitted = request.POST.get("page", "")
        if submitted != page.key:
            known = flow.is_known_key(submitted)
            if known and flow.page_rank(participant.study, submitted) < flow.page_rank(
                participant.study, page.key
            ):
                messages.warning(
                    request,
                    _(
                        "That page was already submitted; your stored answers are kept. "
                        "Please continue here."
                    ),
                )
            elif known:
                messages.warning(request, _("That page is not open yet; nothing was stored."))
            else:
                messages.error(
                    request, _("The form was altered and could not be used; nothing was stored.")
                )
            return redirect("participant", code=code)
        form = page.form(request.POST)
        if form is None:
            messages.warning(request, _("There is nothing to submit on this page."))
            return redirect("participant", code=code)
        integrity_record.record_post(page, request.POST, form.fields)  # never stops the answers
        if not form.is_valid():
            context = {"page": page, "form": form, "participant": participant, **page.context()}
            context["step"] = flow.progress(page)
            return render(request, page.template, context, status=400)
        try:
            page.submit(form)
        except flow_services.StaleSubmission as exc:
            messages.warning(request, str(exc))
        except flow_services.FlowError as exc:
            messages.error(request, str(exc))
        return redirect("participant", code=code)
    if page.records_visit:
        flow_services.page_visit_enter(participant=participant, page=page.key)
    context = {
        "page": page,
        "form": page.initial_form(),
        "participant": participant,
        "step": flow.progress(page),
        **page.context(),
    }
    return render(request, page.template, context)


@never_cache
@require_http_methods(["GET", "POST"])
def participant_withdraw(request: HttpRequest, code: str) -> HttpResponse:
    """GET: are you sure? (changes nothing); POST: withdraw, then the withdrew end page.

    Possible until the study ends for them; a second click lands on the same end page.
    """
    participant = _participant_or_404(request, code)
    if isinstance(participant, HttpResponse):
        return participant
    with translation.override(participant.page_language):
        page = flow.page_for(participant)
        if participant.state == Participant.State.WITHDRAWN:
            return redirect("participant", code=code)
        if page.is_end:
            messages.warning(
                request,
                _(
                    "You have already finished this study. To have your answers deleted, "
                    "please contact the research team and give them your code."
                ),
            )
            return redirect("participant", code=code)
        if request.method == "GET":
            return render(request, "studyapp/withdraw.html", {"participant": participant})
        withdrawal.participant_withdraw(participant=participant, page=page.key)
    return redirect("participant", code=code)


@never_cache
@require_GET
def participant_status(request: HttpRequest, code: str) -> JsonResponse:
    participant = selectors.participant_get_status(code=code)
    if participant is None:
        return JsonResponse({"error": "unknown participant link"}, status=404)
    progress = waiting.waiting_check(participant=participant)
    progress["next"] = reverse("participant", kwargs={"code": code})
    return JsonResponse(progress)


_PATH_CODE = re.compile(r"^/p/([A-Za-z0-9_-]{1,40})/")
_PATH_STUDY = re.compile(r"^/s/([-a-zA-Z0-9_]{1,50})/")


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """A lost or stale form token (cookies cleared, a page open for days): the study's own
    page in its language, with a button back to the participant's current page (a GET,
    which sets a fresh token), instead of Django's bare English "Forbidden"."""
    lang, resume = None, "/"
    m = _PATH_CODE.match(request.path)
    if m and (participant := selectors.participant_get(code=m.group(1))) is not None:
        lang, resume = participant.page_language, reverse("participant", args=[participant.code])
    elif (m := _PATH_STUDY.match(request.path)) is not None:
        study = Study.objects.filter(slug=m.group(1)).first()
        lang = study.language if study else None
        resume = request.path
    with translation.override(lang):
        return render(request, "studyapp/csrf_failure.html", {"resume": resume}, status=403)
