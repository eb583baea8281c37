"""What the coding gives: the coders' agreement, the resolution of their disagreements into
final codes, exemplar quotes for a paper, and (a suggestion only) answers grouped by word
use. The figures, quotes and groups are `analysis.coding`'s; these pages only show them.

A coder still blind (some coder unfinished) gets none of these pages' codes: agreement and
resolution wait until every coder has finished; quotes by code need the final codes.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import pandas as pd
from django.contrib.admin.views.decorators import staff_member_required as staff_only
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods

from analysis.coding import CodingError, quotes_table, suggest_groups, write_quotes
from studyapp.coding import browse, services
from studyapp.coding.forms import CodingForm, QuotesForm, SuggestForm
from studyapp.coding.models import Code
from studyapp.coding.page import form_error, render, study_for
from studyapp.coding.selectors import final_codes_frame, is_blind, study_agreement
from studyapp.coding.units import WHY_FIELDS, answers_of, evaluations_of
from studyapp.export import evaluations_frame

BLIND = "every assigned coder must finish first: until then a coder sees only their own codes"
CONTENT_TYPES = {"csv": "text/csv", "md": "text/markdown", "tex": "application/x-tex"}


def figure(value: float) -> str:
    """A kappa or alpha as the page shows it: 3 decimals; 0/0 as 'undefined'."""
    return "undefined" if value is None or math.isnan(value) else f"{value:.3f}"


@never_cache
@staff_only
@require_GET
def agreement(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_for(request, slug, "view_coding")
    if is_blind(request.user, study):
        return render(request, study, "coding/agreement.html", "Agreement", {}, error=BLIND)
    try:
        result = study_agreement(study)
    except CodingError as exc:
        return render(request, study, "coding/agreement.html", "Agreement", {}, error=str(exc))
    kappa = [{**r, "value": figure(r["kappa"])} for r in result.kappa.to_dict("records")]
    alpha = [{**r, "value": figure(r["alpha"])} for r in result.alpha.to_dict("records")]
    return render(request, study, "coding/agreement.html", f"Agreement: {study.slug}",
                  {"kappa": kappa, "alpha": alpha})  # fmt: skip


@never_cache
@staff_only
@require_http_methods(["GET", "POST"])
def resolve(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_for(request, slug, "view_coding", "add_finalcode")
    if is_blind(request.user, study):
        return render(request, study, "coding/resolve.html", "Resolve", {}, error=BLIND,
                      status=403)  # fmt: skip
    error, status = "", 200
    if request.method == "POST":
        try:
            if request.POST.get("action") == "agreed":
                services.final_codes_from_agreement(study=study, by=request.user)
            else:
                form = CodingForm(study, request.POST)
                if not form.is_valid():
                    raise services.CodingRefused(f"not resolved: {form_error(form)}")
                services.final_code_save(
                    study=study, by=request.user, evaluation_id=form.cleaned_data["evaluation"],
                    field=form.cleaned_data["field"], code_names=form.cleaned_data["codes"],
                    note=form.cleaned_data["note"],
                )  # fmt: skip
            return HttpResponseRedirect(request.get_full_path())
        except services.CodingRefused as exc:
            error, status = str(exc), 400
    show = request.GET.get("show", "disagreements")
    if show not in ("disagreements", "unresolved", "all"):
        show, error, status = "disagreements", f"unknown list {show!r}", 400
    rows = [r for r in browse.rows(study, request.user, {"show": show if show != "all" else ""})
            if r.others or r.mine is not None]  # fmt: skip
    return render(request, study, "coding/resolve.html", f"Resolve: {study.slug}",
                  {"rows": rows, "show": show, "codes": Code.objects.filter(study=study)},
                  error=error, status=status)  # fmt: skip


@never_cache
@staff_only
@require_GET
def quotes(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_for(request, slug, "view_coding")
    form = QuotesForm(study, request.GET or None)
    context: dict[str, object] = {"form": form}
    if not form.is_bound:
        return render(request, study, "coding/quotes.html", "Exemplar quotes", context)
    error = ""
    if not form.is_valid():
        error = form_error(form)
    elif form.cleaned_data["codes"] and is_blind(request.user, study):
        error = "quotes by code need the final codes: " + BLIND
    if error:
        return render(request, study, "coding/quotes.html", "Exemplar quotes", context,
                      error=error, status=400)  # fmt: skip
    data = form.cleaned_data
    band = (data["rating_min"], data["rating_max"]) if data["rating_min"] is not None else None
    try:
        table = quotes_table(
            evaluations_frame(study, with_text=True), final_codes_frame(study),
            want=data["codes"], ratings=band, field=data["field"] or None,
        )  # fmt: skip
    except ValueError as exc:
        return render(request, study, "coding/quotes.html", "Exemplar quotes", context,
                      error=str(exc), status=400)  # fmt: skip
    if request.GET.get("download"):
        fmt = data["format"] or "csv"
        with tempfile.TemporaryDirectory() as tmp:
            write_quotes(table, Path(tmp), stem="quotes")
            body = (Path(tmp) / f"quotes.{fmt}").read_bytes()
        response = HttpResponse(body, content_type=f"{CONTENT_TYPES[fmt]}; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{study.slug}-quotes.{fmt}"'
        return response
    context["table"] = table.to_dict("records")
    return render(request, study, "coding/quotes.html", "Exemplar quotes", context)


@never_cache
@staff_only
@require_GET
def suggest(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_for(request, slug, "view_coding")
    form = SuggestForm(request.GET or None)
    context: dict[str, object] = {"form": form}
    if not form.is_bound:
        return render(request, study, "coding/suggest.html", "Suggested groups", context)
    if not form.is_valid():
        return render(request, study, "coding/suggest.html", "Suggested groups", context,
                      error=form_error(form), status=400)  # fmt: skip
    field = form.cleaned_data["field"]
    answers = {a.unit: a.text for a in answers_of(evaluations_of(study), [field])}
    try:
        groups = suggest_groups(pd.Series(answers, dtype=str), k=form.cleaned_data["k"])
    except ValueError as exc:
        return render(request, study, "coding/suggest.html", "Suggested groups", context,
                      error=str(exc), status=400)  # fmt: skip
    groups = groups.assign(answer=groups["unit"].map(answers)).sort_values(
        ["suggested_group", "unit"]
    )
    context.update(groups=groups.to_dict("records"), field=field, rating=WHY_FIELDS[field])
    return render(request, study, "coding/suggest.html", "Suggested groups", context)
