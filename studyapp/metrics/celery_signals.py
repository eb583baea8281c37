"""Task metrics, recorded in the worker processes through Celery's signals (connected when a
worker starts, `studyapp.config.celery_app`): run time and failures by task, and the
recourse latency by method once a participant's recourses are stored."""

from __future__ import annotations

import time
from typing import Any

from celery.signals import task_failure, task_postrun, task_prerun, task_retry

from studyapp.metrics.store import RECOURSE_SECONDS, TASK_FAILURES, TASK_RETRIES, TASK_SECONDS

RECOURSE_TASK = "studyapp.tasks.generate_recourses"
#: task id -> perf_counter at its start, in this process
_started: dict[str, float] = {}


@task_prerun.connect
def _prerun(task_id: str | None = None, **_: Any) -> None:
    if task_id:
        _started[task_id] = time.perf_counter()


@task_postrun.connect
def _postrun(
    task_id: str | None = None,
    task: Any = None,
    args: Any = None,
    kwargs: Any = None,
    retval: Any = None,
    state: str | None = None,
    **_: Any,
) -> None:
    t0 = _started.pop(task_id or "", None)
    name = getattr(task, "name", "") or "unknown"
    if t0 is not None:
        TASK_SECONDS.labels(name).observe(time.perf_counter() - t0)
    if name == RECOURSE_TASK and state == "SUCCESS" and retval == "done":
        participant_id = (kwargs or {}).get("participant_id") or (args or [None])[0]
        if participant_id is not None:
            record_recourse_latency(int(participant_id))


@task_failure.connect
def _failure(sender: Any = None, **_: Any) -> None:
    TASK_FAILURES.labels(getattr(sender, "name", "") or "unknown").inc()


@task_retry.connect
def _retry(sender: Any = None, **_: Any) -> None:
    TASK_RETRIES.labels(getattr(sender, "name", "") or "unknown").inc()


def record_recourse_latency(participant_id: int) -> None:
    """One sample per recourse method in the participant's stored set: from the task's
    queueing (or its first start, if earlier) to the set stored."""
    from studyapp.models import Participant, Recourse

    row = (
        Participant.objects.filter(pk=participant_id)
        .values("generation_queued_at", "generation_started_at", "generation_finished_at")
        .first()
    )
    if row is None or row["generation_finished_at"] is None:
        return
    # the earlier of the two: the queue time is refreshed while a task waits for a fit
    marks = [row[k] for k in ("generation_queued_at", "generation_started_at") if row[k]]
    if not marks:
        return
    since = min(marks)
    seconds = max(0.0, (row["generation_finished_at"] - since).total_seconds())
    methods = set(
        Recourse.objects.filter(participant_id=participant_id).values_list("method", flat=True)
    )
    for method in sorted(methods):
        RECOURSE_SECONDS.labels(method or "pool_search").observe(seconds)
