"""The periodic sweeper: every participant waiting for recourses gets them, whatever failed.

A participant's recourse task can be lost: the broker was down when it was queued
(`tasks.queue_generation`), the worker died while running it (Redis re-delivers an unacknowledged task
only after its visibility timeout; the embedded broker never re-delivers a fetched one), or
a message was dropped. The task is idempotent, so the sweeper simply queues it again for
every participant still waiting whose last sign of life — queued, started, or a look at a
method's fit that is still running — is older than `STUDYAPP_SWEEP_AFTER_S`. Generation
takes well under a second, so a task that quiet is lost, not slow. Celery beat runs the
sweep every `STUDYAPP_SWEEP_EVERY_S` (`scripts/run` and the compose worker start beat).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from studyapp.models import Participant

S = Participant.State
G = Participant.Generation


def sweep_after_s() -> float:
    return float(getattr(settings, "STUDYAPP_SWEEP_AFTER_S", 45))


def stuck(now: dt.datetime | None = None) -> list[int]:
    """Participants waiting with no sign of their task for longer than the threshold."""
    cutoff = (now or timezone.now()) - dt.timedelta(seconds=sweep_after_s())
    quiet = Q(generation_queued_at__lt=cutoff) | Q(generation_queued_at__isnull=True)
    quiet &= Q(generation_started_at__lt=cutoff) | Q(generation_started_at__isnull=True)
    rows = Participant.objects.filter(
        quiet, state__in=(S.DECISION, S.WAITING), generation__in=(G.QUEUED, G.RUNNING)
    ).order_by("generation_queued_at")
    return list(rows.values_list("pk", flat=True)[:1000])


def sweep(send: Callable[[int], bool], now: dt.datetime | None = None) -> list[int]:
    """Queue the recourse task again (`send`, the task's safe queueing) for every stuck
    participant; returns those queued."""
    now = now or timezone.now()
    queued = []
    for pk in stuck(now):
        # a fresh sign of life first, so the next sweep leaves this one alone for a while
        Participant.objects.filter(pk=pk).update(generation_queued_at=now)
        if send(pk):
            queued.append(pk)
    return queued
