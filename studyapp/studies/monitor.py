"""Figures for watching a study fill: who is where, how fast, what failed, how full quotas are.

A read (selector) shared by the console's monitor page and the REST API. Counts are grouped
in the database; only the durations of finished participants come back as one flat column
each (a median is not portable SQL), never one Python object per participant.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from django.db.models import Count, DurationField, ExpressionWrapper, F, Max, Q, QuerySet
from django.db.models.fields.json import KeyTextTransform
from django.utils import timezone

from studyapp.generation import stored_fits
from studyapp.models import Participant, Study
from studyapp.participation import assignment, flow
from studyapp.studies import monitor_cases, monitor_methods

S = Participant.State
G = Participant.Generation

IN_PROGRESS = assignment.IN_PROGRESS
#: states of participants who never got past screening (turned away by it or by a quota, or
#: declined consent); the states up to the screening are added per study (`not_admitted`)
NOT_ADMITTED = (S.SCREENING, S.SCREENED_OUT, S.QUOTA_FULL, S.DECLINED)


def not_admitted(study: Study) -> tuple[str, ...]:
    """NOT_ADMITTED with the states before the screening in this study's page order."""
    order = flow.states(study)
    return tuple(dict.fromkeys([*order[: order.index(S.SCREENING)], *NOT_ADMITTED]))


def _seconds(qs: QuerySet[Participant], start: str, end: str) -> np.ndarray:
    """`end - start` in seconds for rows that have both, computed in the database."""
    span = ExpressionWrapper(F(end) - F(start), output_field=DurationField())
    rows = (
        qs.filter(**{f"{start}__isnull": False, f"{end}__isnull": False})
        .annotate(span=span)
        .values_list("span", flat=True)
    )
    return np.array([d.total_seconds() for d in rows if d is not None], dtype=float)


def _stats(values: np.ndarray) -> dict[str, float | int | None]:
    if values.size == 0:
        return {"n": 0, "median": None, "p95": None, "max": None}
    return {
        "n": int(values.size),
        "median": round(float(np.median(values)), 3),
        "p95": round(float(np.percentile(values, 95)), 3),
        "max": round(float(values.max()), 3),
    }


def _rate(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def _answer_values(value: Any) -> list[str]:
    """A screening answer as the database returns it (a code, or a list of codes, maybe as
    JSON text) as a list of code strings."""
    if value is None:
        return []
    if isinstance(value, str) and value.startswith("["):
        try:
            value = json.loads(value)
        except ValueError:
            return [value]
    if isinstance(value, list):
        return [str(v) for v in value if v is not None]
    return [str(value)]


def quota_fill(study: Study) -> list[dict[str, Any]]:
    """Per quota: participants filling its cell (`assignment.filling`: completes and fresh
    in-progress ones) against the limit, split into completed and in progress. Counted by
    (state, answer) groups in the database, the quota's value matched per group."""
    base = assignment.filling(study)
    out = []
    for quota in study.quotas.select_related("condition").order_by("pk"):
        qs = base.filter(condition=quota.condition.name) if quota.condition_id else base
        completed = in_progress = 0
        if quota.screening_key:
            wanted = assignment._label_codes(study, quota.screening_key, quota.screening_value)
            groups = (
                qs.annotate(answer=KeyTextTransform(quota.screening_key, "screening"))
                .values("state", "answer")
                .annotate(n=Count("pk"))
                .order_by()
            )
            for g in groups:
                if wanted & set(_answer_values(g["answer"])):
                    if g["state"] == S.COMPLETED:
                        completed += g["n"]
                    else:
                        in_progress += g["n"]
        else:
            counts = qs.aggregate(
                completed=Count("pk", filter=Q(state=S.COMPLETED)),
                in_progress=Count("pk", filter=~Q(state=S.COMPLETED)),
            )
            completed, in_progress = counts["completed"], counts["in_progress"]
        count = completed + in_progress
        out.append(
            {
                "id": quota.pk,
                "condition": quota.condition.name if quota.condition else "",
                "screening_key": quota.screening_key,
                "screening_value": quota.screening_value,
                "completed": completed,
                "in_progress": in_progress,
                "count": count,
                "limit": quota.limit,
                "fill": _rate(count, quota.limit),
                "full": count >= quota.limit,
            }
        )
    return out


def study_monitor(study: Study) -> dict[str, Any]:
    """Everything the monitor page and `/api/.../monitor` show; JSON-serialisable."""
    now = timezone.now()
    qs = monitor_cases.real_participants(study)
    by_state = {s: 0 for s in S.values}
    for row in qs.values("state").annotate(n=Count("pk")).order_by():
        by_state[row["state"]] = row["n"]
    conditions = [c.name for c in study.conditions.order_by("position", "name")]
    by_condition: dict[str, dict[str, int]] = {
        name: {s: 0 for s in S.values} for name in conditions
    }
    for row in qs.values("condition", "state").annotate(n=Count("pk")).order_by():
        cell = by_condition.setdefault(row["condition"], {s: 0 for s in S.values})
        cell[row["state"]] = row["n"]
    started = sum(by_state.values())
    completed = by_state[S.COMPLETED]
    admitted = started - sum(by_state[s] for s in not_admitted(study))
    gen = qs.aggregate(
        failed=Count("pk", filter=Q(generation=G.FAILED)),
        queued=Count("pk", filter=Q(generation__in=(G.QUEUED, G.RUNNING))),
        empty=Count("pk", filter=Q(generation=G.EMPTY)),
        flagged=Count("pk", filter=Q(flagged=True)),
        last=Max("updated_at"),
    )
    decisions = {"rejected": 0, "approved": 0, "hypothetical": 0}
    for row in qs.values("profile__decision").annotate(n=Count("pk")).order_by():
        if row["profile__decision"] in decisions:
            decisions[row["profile__decision"]] = row["n"]
    profiles = sum(decisions.values())
    durations = _seconds(qs.filter(state=S.COMPLETED), "created_at", "finished_at")
    latency = _seconds(qs, "generation_queued_at", "generation_finished_at")
    return {
        "study": study.slug,
        "state": study.state,
        "generated_at": now.isoformat(),
        "participants": started,
        "test_participants": Participant.objects.filter(study=study, is_test=True).count(),
        "by_state": by_state,
        "by_condition": by_condition,
        "in_progress": sum(by_state[s] for s in IN_PROGRESS),
        "completion": {
            "completed": completed,
            "started": started,
            "rate": _rate(completed, started),
            "past_screening": admitted,
            "rate_past_screening": _rate(completed, admitted),
        },
        # the decision model's verdicts on submitted profiles: approved ones ended with the
        # approved outcome, hypothetical ones went on under "suppose it had declined"
        "decisions": {
            **decisions,
            "profiles": profiles,
            "approval_rate": _rate(decisions["approved"] + decisions["hypothetical"], profiles),
        },
        "duration_seconds": _stats(durations),
        "recourse_latency_seconds": _stats(latency),
        "recourse_failures": {
            "failed": gen["failed"],
            "no_admissible": gen["empty"],
            "pending": gen["queued"],
            "flagged": gen["flagged"],
        },
        "quotas": quota_fill(study),
        "stuck_tasks": monitor_cases.stuck_tasks(study, now),
        "flagged_by_reason": monitor_cases.flagged_by_reason(study),
        "timeline": monitor_cases.timeline(study, now),
        "latency_histogram": monitor_cases.latency_histogram(latency),
        "balanced_fits": balanced_fits(study),
        "design_check": monitor_methods.method_figures(study),
        "release": monitor_cases.release_counts(study),
        "last_activity": gen["last"].isoformat() if gen["last"] else None,
    }


def balanced_fits(study: Study) -> list[dict[str, Any]]:
    """Progress of the models fitted on the study's current pool (EBR/IBR pool fits and the
    design's recourse methods)."""
    rows = stored_fits.current_rows(study)
    return [
        {
            "strategy": r["strategy"],
            "state": r["state"],
            "progress": round(float(r["progress"]), 3),
            "seconds": None if r["seconds"] is None else round(float(r["seconds"]), 1),
            "message": r["message"],
        }
        for r in rows.values("strategy", "state", "progress", "seconds", "message")
    ]
