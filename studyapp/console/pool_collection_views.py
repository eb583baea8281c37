"""The console page that makes a pool-collection study's answers another study's pool.

The same two steps as a pool upload (`admin_views.pool_upload_view`): a preview (the pool
check of every row, and who was left out: non-disclosers, failed attention checks), then a
confirmation that stores the pool only when the answers are still those previewed.
"""

from __future__ import annotations

import re
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from studyapp.console.admin_views import _change_url, _page, _preview_context, _study
from studyapp.definition.errors import StudyError
from studyapp.models import Study
from studyapp.studies import access, pool_collection, updates

_SHA = re.compile(r"^[0-9a-f]{64}$")


def _sources(request: HttpRequest, target: Study) -> list[Study]:
    rows = access.studies_for(request.user).filter(kind="pool_collection").exclude(pk=target.pk)
    return list(rows.order_by("slug"))


def pool_from_collection_view(model_admin: Any, request: HttpRequest, pk: int) -> HttpResponse:
    target = _study(model_admin, request, pk)
    sources = _sources(request, target)
    frozen = "pool" in updates.frozen_parts(target)
    preview = counts = source = sha = None
    with_test = False
    if request.method == "POST" and not frozen:
        slug = request.POST.get("source", "")
        with_test = request.POST.get("with_test", "") == "1"
        source = next((s for s in sources if s.slug == slug), None)
        if source is None:
            messages.error(request, "Choose one of the listed pool-collection studies.")
        elif "confirm" in request.POST:
            sha = request.POST.get("sha256", "")
            try:
                if not _SHA.match(sha):
                    raise StudyError("the confirmation is not of a preview; preview again")
                stored = pool_collection.study_pool_from_collection(
                    target=target, source=source, sha256=sha, with_test=with_test
                )
            except StudyError as exc:
                messages.error(request, str(exc))
            else:
                messages.success(
                    request, f"Stored {stored.rows:,} profiles from {source.slug} as the pool."
                )
                return redirect(_change_url(target))
        else:
            try:
                preview, collected = pool_collection.pool_from_collection_preview(
                    target=target, source=source, with_test=with_test
                )
                counts, sha = collected.counts, collected.sha256
            except StudyError as exc:
                messages.error(request, str(exc))
    return _page(
        model_admin,
        request,
        "pool_from_collection.html",
        target,
        title=f"Pool of {target.slug} from a pool-collection study",
        frozen=frozen,
        sources=sources,
        source=source,
        counts=counts,
        with_test=with_test,
        sha256=sha if preview is not None and preview.ok else None,
        preview=_preview_context(preview),
    )
