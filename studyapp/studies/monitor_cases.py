"""The monitor's lists and series: tasks stuck or failed with the time they have waited,
flagged cases by reason, starts and completions over time, and the spread of recourse
latency. Test participants (previews, bots) are never counted.

Reads only (selectors for `monitor.study_monitor`); lists are capped (`LIST_MAX`) so a study
with thousands of flagged cases still loads.
"""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from django.db.models import Count, Q, QuerySet

from studyapp.models import Participant, Study
from studyapp.participation import release

S = Participant.State
G = Participant.Generation
LIST_MAX = 50
#: time buckets of the starts/completions series, the first that gives at most 48 buckets
BUCKETS = (
    ("minute", timedelta(minutes=1)),
    ("10 minutes", timedelta(minutes=10)),
    ("hour", timedelta(hours=1)),
    ("6 hours", timedelta(hours=6)),
    ("day", timedelta(days=1)),
    ("week", timedelta(weeks=1)),
)
MAX_BUCKETS = 48


def real_participants(study: Study) -> QuerySet[Participant]:
    return Participant.objects.filter(study=study, is_test=False)


def stuck_tasks(study: Study, now: datetime) -> list[dict[str, Any]]:
    """Participants whose recourse task is past the waiting time-out (queued or running) or
    failed, longest wait first, with the seconds waited (failed: until it failed)."""
    late = now - timedelta(seconds=study.waiting_timeout_s)
    qs = real_participants(study).filter(
        Q(
            state__in=(S.DECISION, S.WAITING),
            generation__in=(G.QUEUED, G.RUNNING),
            generation_queued_at__lte=late,
        )
        | Q(generation=G.FAILED)
    )
    rows = []
    fields = ("pk", "state", "generation", "generation_queued_at", "generation_finished_at",
              "wait_timeouts", "generation_error")  # fmt: skip
    for p in qs.order_by("generation_queued_at").values(*fields)[:LIST_MAX]:
        queued, finished = p["generation_queued_at"], p["generation_finished_at"]
        end = finished if p["generation"] == G.FAILED and finished else now
        rows.append(
            {
                "participant": p["pk"],
                "state": p["state"],
                "generation": p["generation"] or "",
                "queued_at": queued.isoformat() if queued else None,
                "waited_s": round((end - queued).total_seconds(), 1) if queued else None,
                "requeued": p["wait_timeouts"],
                "error": (p["generation_error"] or "")[:200],
            }
        )
    return rows


def _reason_kind(reason: str) -> str:
    """A flag reason with its numbers left out, so like cases group together."""
    return re.sub(r"\d+(\.\d+)?", "N", reason.strip())


def flagged_by_reason(study: Study) -> list[dict[str, Any]]:
    """Flagged cases grouped by the kind of reason (a case with two reasons is in both),
    most frequent first, with their participant ids (at most `LIST_MAX` each)."""
    groups: dict[str, list[int]] = defaultdict(list)
    for pk, reasons in (
        real_participants(study).filter(flagged=True).values_list("pk", "flag_reason")
    ):
        kinds = {_reason_kind(r) for r in (reasons or "").split("; ") if r.strip()}
        for kind in kinds or {"(no reason given)"}:
            groups[kind].append(pk)
    out = [
        {"reason": k, "n": len(v), "participants": sorted(v)[:LIST_MAX]} for k, v in groups.items()
    ]
    return sorted(out, key=lambda g: (-g["n"], g["reason"]))


def timeline(study: Study, now: datetime) -> dict[str, Any]:
    """Starts and completions per time bucket from the first start until now (a bucket
    width that gives at most `MAX_BUCKETS`)."""
    qs = real_participants(study)
    starts = list(qs.values_list("created_at", flat=True))
    completes = list(qs.filter(state=S.COMPLETED).values_list("finished_at", flat=True))
    if not starts:
        return {"bucket": "", "buckets": []}
    first = min(starts)
    span = max(now - first, timedelta(minutes=1))
    name, width = next(((n, w) for n, w in BUCKETS if span / w <= MAX_BUCKETS), BUCKETS[-1])
    n = int(span / width) + 1
    counts = np.zeros((n, 2), dtype=int)
    for col, times in ((0, starts), (1, [t for t in completes if t is not None])):
        for t in times:
            counts[min(n - 1, max(0, int((t - first) / width))), col] += 1
    return {
        "bucket": name,
        "buckets": [
            {"start": (first + i * width).isoformat(), "starts": int(a), "completions": int(b)}
            for i, (a, b) in enumerate(counts)
        ],
    }


def latency_histogram(values: np.ndarray, bins: int = 12) -> list[dict[str, Any]]:
    """Recourse latencies (seconds) in equal-width bins from 0 to the maximum."""
    if values.size == 0:
        return []
    top = float(values.max()) or 1.0
    counts, edges = np.histogram(values, bins=bins, range=(0.0, top))
    return [
        {"from": round(float(lo), 3), "to": round(float(hi), 3), "n": int(c)}
        for lo, hi, c in zip(edges[:-1], edges[1:], counts, strict=True)
    ]


def release_counts(study: Study) -> dict[str, int] | None:
    """Delayed release: participants waiting for their release, released and not back yet,
    returned for the second session, and expired (None for a study without delayed release).
    Counted in the database, one query, by state as well as by time: one who ended otherwise
    (failed an attention check on the profile page, withdrew) waits for nothing and is in
    none of these."""
    if study.release_mode != "delayed":
        return None
    qs = real_participants(study).filter(submitted_at__isnull=False)
    return qs.aggregate(
        waiting=Count("pk", filter=Q(released_at__isnull=True, state__in=release.HELD)),
        released=Count(
            "pk",
            filter=Q(
                released_at__isnull=False,
                returned_at__isnull=True,
                state__in=(S.EVALUATING, S.NO_RECOURSE),
            ),
        ),
        returned=Count("pk", filter=Q(returned_at__isnull=False) & ~Q(state=S.EXPIRED)),
        expired=Count("pk", filter=Q(state=S.EXPIRED)),
    )
