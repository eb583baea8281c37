"""The console's Prolific page of a study: the connection (the token is asked once and never
shown), the outcome -> completion code mapping with what each participant gets, the
reconciliation with Prolific (each mismatch and its proposed action), the actions (approve
the agreeing submissions in bulk, reject, screen out, ask to return, set up and pay bonuses)
and the ledger of what was sent, by whom and when.

Reading needs the monitor's permissions; connecting and acting, the study's change permission.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.admin import site
from django.contrib.admin.views.decorators import staff_member_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from studyapp.console.views import study_or_404
from studyapp.models import PanelAction, PanelConnection, Study
from studyapp.panel import actions, bonus, codes, service
from studyapp.panel.client import REJECT_MESSAGE_MIN, REJECTION_CATEGORIES
from studyapp.panel.errors import PanelError
from studyapp.studies import access

CHANGE_PERM = "studyapp.change_study"


class ConnectForm(forms.Form):
    token = forms.CharField(widget=forms.PasswordInput, help_text="Stored encrypted; never shown.")
    panel_study_id = forms.CharField(label="Prolific study id", max_length=64)
    second_study_id = forms.CharField(
        label="Second session's Prolific study id", max_length=64, required=False
    )


class RejectForm(forms.Form):
    submission_id = forms.CharField(max_length=64)
    category = forms.ChoiceField(choices=[(c, c) for c in REJECTION_CATEGORIES])
    message = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}), min_length=REJECT_MESSAGE_MIN, max_length=2000
    )


class IdsForm(forms.Form):
    submission_ids = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}))
    reason = forms.CharField(max_length=300, required=False)

    def ids(self) -> list[str]:
        return self.cleaned_data["submission_ids"].replace(",", " ").split()


class BonusForm(forms.Form):
    amount = forms.CharField(max_length=12)
    where = forms.CharField(
        max_length=300, required=False, help_text="COLUMN=VALUE, space-separated"
    )
    per = forms.CharField(max_length=60, required=False)
    session = forms.TypedChoiceField(choices=[(1, 1), (2, 2)], coerce=int, initial=1)


FORMS: dict[str, type[forms.Form]] = {
    "connect": ConnectForm, "reject": RejectForm, "screen_out": IdsForm,
    "request_return": IdsForm, "bonus": BonusForm,
}  # fmt: skip


def _act(request: HttpRequest, study: Study, do: str) -> str:
    """Runs one posted action; returns the message to show."""
    who = actions.Who(by=request.user.get_username(), user=request.user)
    form = FORMS[do](request.POST) if do in FORMS else None
    if form is not None and not form.is_valid():
        raise PanelError("; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items()))
    data: dict[str, Any] = form.cleaned_data if form is not None else {}
    if do == "connect":
        service.panel_connect(study=study, token=data["token"], by_user=request.user,
                              panel_study_id=data["panel_study_id"],
                              second_study_id=data["second_study_id"])  # fmt: skip
        return "Connected to Prolific; the token is stored encrypted."
    if do == "push_codes":
        sent = service.panel_push_codes(study)
        return f"Sent the completion codes to {len(sent)} Prolific study(ies)."
    if do == "approve_agreeing":
        conn, rec = service.connection_of(study), service.panel_sync(study)
        client, n = service.client_for(study), 0
        for session, sid in service.sessions(conn).items():
            ids = [s for k, s in rec.to_approve if k == session]
            if ids and actions.approve(study, client, ids, who, sid):
                n += len(ids)
        return f"Approved {n} submission(s)."
    if do == "reject":
        row = actions.reject(study, service.client_for(study), data["submission_id"],
                             data["category"], data["message"], who)  # fmt: skip
        return f"Rejection {row.pk}: {row.state}."
    if do == "screen_out":
        rows = actions.screen_out(study, service.client_for(study), form.ids(), who)  # type: ignore[union-attr]
        return f"Screened out {len(rows)} submission(s)."
    if do == "request_return":
        rows = actions.request_return(study, service.client_for(study), form.ids(),  # type: ignore[union-attr]
                                      data["reason"], who)  # fmt: skip
        return f"Asked {len(rows)} participant(s) to return."
    if do == "bonus":
        rows = bonus.bonus_rows(study, data["amount"], data["where"].split(), data["per"])
        sid = service.sessions(service.connection_of(study)).get(data["session"])
        if sid is None:
            raise PanelError("session 2 needs a second Prolific study")
        row = actions.bonus_setup(study, service.client_for(study), rows, who, sid)
        return f"Bonuses set up for {len(rows)} participant(s) (action {row.pk}); pay them below."
    if do == "pay":
        setup = PanelAction.objects.filter(study=study, pk=request.POST.get("setup") or 0).first()
        if setup is None:
            raise PanelError("no such bonus set-up")
        row = actions.bonus_pay(study, service.client_for(study), setup, who)
        return f"Bonus payment {row.pk}: {row.state}."
    raise PanelError(f"unknown action {do!r}")


@never_cache
@require_http_methods(["GET", "POST"])
@staff_member_required
def prolific_page(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_or_404(request, slug, access.MONITOR_PERMS)
    can_change = access.may(request.user, CHANGE_PERM)
    if request.method == "POST":
        if not can_change:
            raise PermissionDenied(f"missing permissions: {CHANGE_PERM}")
        try:
            messages.success(request, _act(request, study, request.POST.get("do", "")))
        except PanelError as exc:
            messages.error(request, f"Not done: {exc}")
        return redirect("console-prolific", slug=study.slug)
    conn = PanelConnection.objects.filter(study=study).first()
    rec, problem = None, ""
    if conn is not None and request.GET.get("sync") == "1":
        try:
            rec = service.panel_sync(study)
        except PanelError as exc:
            problem = str(exc)
    context: dict[str, Any] = {
        **site.each_context(request),
        "title": f"Prolific: {study.slug}",
        "study": study,
        "conn": conn,
        "mapping": codes.mapping(study, bool(conn and conn.second_study_id)),
        "delayed": codes.is_delayed(study),
        "rec": rec,
        "problem": problem,
        "ledger": PanelAction.objects.filter(study=study).select_related("by_user")[:200],
        "setups": PanelAction.objects.filter(study=study, kind="bonus_setup", state="sent"),
        "can_change": can_change,
        "forms": {"connect": ConnectForm(), "reject": RejectForm(), "bonus": BonusForm()},
        "categories": REJECTION_CATEGORIES,
    }
    return TemplateResponse(request, "console/prolific.html", context)
