"""What the coding gives: the coders' agreement, the resolution of their disagreements into
final codes, exemplar quotes for a paper, and (a suggestion only) answers grouped by word
use. The figures, quotes and groups are `analysis.coding`'s; these pages only show them.

A coder still blind (some coder unfinished) gets none of these pages' codes: agreement and
resolution wait until every coder has finished; quotes (which show the strategy) wait too
in a study coded blind, and quotes by code need the final codes.
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
from studyapp.coding import answer_services, browse, services
from studyapp.coding.forms import CodingForm, QuotesForm, SuggestForm
from studyapp.coding.models import Code, FinalCodeChange
from studyapp.coding.page import form_error, render, study_for
from studyapp.coding.selectors import (
    final_codes_frame,
    hides_recourse,
    is_blind,
    study_agreement,
)
from studyapp.coding.units import rating_field
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
                answer_services.final_codes_from_agreement(study=study, by=request.user)
            else:
                form = CodingForm(study, request.POST)
                if not form.is_valid():
                    raise services.CodingRefused(f"not resolved: {form_error(form)}")
                d = form.cleaned_data
                unit = d["unit"] or answer_services.unit_for(study, d["evaluation"], d["field"])
                answer_services.final_code_save(study=study, by=request.user, unit=unit,
                                                code_names=d["codes"], note=d["note"])  # fmt: skip
            return HttpResponseRedirect(request.get_full_path())
        except services.CodingRefused as exc:
            error, status = str(exc), 400
    show = request.GET.get("show", "disagreements")
    if show not in ("disagreements", "unresolved", "all"):
        show, error, status = "disagreements", f"unknown list {show!r}", 400
    data = {"show": {"all": "coded", "unresolved": "unresolved_coded"}.get(show, show)}
    page = browse.page_of(study, request.user, data, request.GET.get("page"), 50)
    decisions: dict[str, list[FinalCodeChange]] = {}
    units = [r.answer.unit for r in page.object_list]
    for d in FinalCodeChange.objects.filter(study=study, unit__in=units).select_related(
        "decided_by"):  # fmt: skip
        decisions.setdefault(d.unit, []).append(d)
    rows = [(r, decisions.get(r.answer.unit, [])) for r in page.object_list]
    return render(request, study, "coding/resolve.html", f"Resolve: {study.slug}",
                  {"rows": rows, "page": page, "show": show,
                   "codes": Code.objects.filter(study=study)},
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
    elif hides_recourse(request.user, study):
        error = "quotes show the strategy, hidden from coders in this study: " + BLIND
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
    form = SuggestForm(study, request.GET or None)
    context: dict[str, object] = {"form": form}
    if not form.is_bound:
        return render(request, study, "coding/suggest.html", "Suggested groups", context)
    if not form.is_valid():
        return render(request, study, "coding/suggest.html", "Suggested groups", context,
                      error=form_error(form), status=400)  # fmt: skip
    field = form.cleaned_data["field"]
    everything = browse.units(study, request.user, {"field": field})
    answers = {a.unit: a.text for a in everything[0 : everything.count()]}
    try:
        groups = suggest_groups(pd.Series(answers, dtype=str), k=form.cleaned_data["k"],
                                language=study.language)  # fmt: skip
    except ValueError as exc:
        return render(request, study, "coding/suggest.html", "Suggested groups", context,
                      error=str(exc), status=400)  # fmt: skip
    groups = groups.assign(answer=groups["unit"].map(answers)).sort_values(
        ["suggested_group", "unit"]
    )
    context.update(groups=groups.to_dict("records"), field=field, rating=rating_field(field))
    return render(request, study, "coding/suggest.html", "Suggested groups", context)
