"""A participant's resume link, given back on their own support request.

The access code in `/p/<code>/` is the participant's login: the admin never lists or shows
it. A researcher answering a participant who lost their link selects that one participant,
names the request (where and when the participant asked), and is shown the link once, on a
page that is not cached. Each showing is logged twice: an admin LogEntry on the participant
(who, when, the request) and a line on the `studyapp.console.resume_link` logger.
"""

from __future__ import annotations

import logging
from typing import Any

from django import forms
from django.contrib import messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.cache import add_never_cache_headers

from studyapp.models import Participant

log = logging.getLogger(__name__)

ACTION = "copy_resume_link"


class SupportRequestForm(forms.Form):
    request = forms.CharField(
        label="The participant's support request",
        max_length=300,
        strip=True,
        help_text="Where and when they asked, e.g. 'e-mail of 3 May, Prolific message 123' "
        "(kept in the log).",
    )


def _page(request: HttpRequest, model_admin: Any, template: str, **context: Any) -> HttpResponse:
    response = TemplateResponse(
        request,
        f"admin/studyapp/participant/{template}",
        {
            **model_admin.admin_site.each_context(request),
            "opts": model_admin.model._meta,
            "action": ACTION,
            **context,
        },
    )
    add_never_cache_headers(response)
    return response


def copy_resume_link(
    model_admin: Any, request: HttpRequest, queryset: QuerySet[Participant]
) -> HttpResponse | None:
    """The admin action: ask for the support request, then show the link once and log it."""
    chosen = list(queryset.select_related("study")[:2])
    if len(chosen) != 1:
        model_admin.message_user(
            request,
            "Select exactly one participant: a resume link goes to one person, on their own "
            "request.",
            messages.ERROR,
        )
        return None
    participant = chosen[0]
    if not model_admin.has_change_permission(request, participant):
        model_admin.message_user(
            request,
            "Giving out a resume link needs the change permission on participants.",
            messages.ERROR,
        )
        return None
    asked = request.POST.get("confirm") == "yes"
    form = SupportRequestForm(request.POST if asked else None)
    if not form.is_valid():
        return _page(
            request,
            model_admin,
            "resume_link_confirm.html",
            title="Copy resume link",
            participant=participant,
            form=form,
        )
    support = form.cleaned_data["request"]
    link = request.build_absolute_uri(reverse("participant", args=[participant.code]))
    model_admin.log_change(
        request, participant, f"Resume link shown on the participant's request: {support}"
    )
    log.warning(
        "resume link of participant %s (study %s) shown to %s on the participant's request: %s",
        participant.pk,
        participant.study.slug,
        request.user.get_username(),
        support,
    )
    return _page(
        request,
        model_admin,
        "resume_link_shown.html",
        title="Resume link",
        participant=participant,
        link=link,
        support=support,
    )
