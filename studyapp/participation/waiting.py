"""No one waits forever: the waiting page's time-out.

When a participant has waited longer than the study's ``waiting_timeout_s`` for their plans
(counted from the moment the task was queued), the waiting page and its status endpoint say
so in the study's language and keep looking; the case is flagged for the researcher
("waiting page timed out"), and a task that never started — still queued, e.g. with the
worker stopped — or that started so long ago that it cannot still be running is queued
again. This happens at most once per time-out period and `MAX_REQUEUES` times in all, so a
page left open on a dead worker does not flood the queue. The generation task is idempotent
(`generation.services`), so an extra task run when the first one comes through stores
nothing twice. The participant's link brings them to their plans as soon as they exist.

A task that is running may legitimately wait up to ``STUDYAPP_FIT_WAIT_S`` for a recourse
method's fit (`generation.services.FitPending`); such a task is not re-queued (the page
still shows the time-out message and the case is still flagged).
"""

from __future__ import annotations

import logging
from datetime import timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from studyapp.models import Participant
from studyapp.participation import selectors

log = logging.getLogger(__name__)

S = Participant.State
G = Participant.Generation
#: at most this many re-queues per participant
MAX_REQUEUES = 5
FLAG = "waiting page timed out"
#: the pages that wait for the plans: the decision page and the waiting page
GENERATING = (S.DECISION, S.WAITING)


def lost_after_s() -> float:
    """A task started longer ago than this cannot still be running (time limit + fit wait)."""
    from studyapp.generation.services import fit_wait_s

    return float(getattr(settings, "CELERY_TASK_TIME_LIMIT", 300)) + fit_wait_s()


def _stuck(p: Participant, now: Any) -> bool:
    """Whether the participant's task needs queueing again."""
    if p.generation == G.QUEUED:
        return True
    started = p.generation_started_at
    return p.generation == G.RUNNING and (
        started is None or (now - started).total_seconds() > lost_after_s()
    )


def _time_out(participant_id: int) -> None:
    """Flag the (locked) case and re-queue its task when stuck; once per time-out period."""
    from studyapp.generation.tasks import generate_recourses

    with transaction.atomic():
        p = (
            Participant.objects.select_for_update(of=("self",))
            .select_related("study")
            .filter(pk=participant_id)
            .first()
        )
        if p is None or p.state not in GENERATING or p.generation_queued_at is None:
            return
        now = timezone.now()
        period = timedelta(seconds=p.study.waiting_timeout_s)
        since = p.requeued_at or p.generation_queued_at
        if now - since < period or p.wait_timeouts >= MAX_REQUEUES:
            return
        p.wait_timeouts += 1
        p.requeued_at = now
        p.flagged = True
        others = [r for r in p.flag_reason.split("; ") if r and not r.startswith(FLAG)]
        reason = f"{FLAG} after {p.study.waiting_timeout_s} s ({p.wait_timeouts}x)"
        p.flag_reason = "; ".join([*others, reason])[:300]
        stuck = _stuck(p, now)
        p.save(update_fields=["wait_timeouts", "requeued_at", "flagged", "flag_reason"])
        if stuck:
            log.warning("participant %s: waiting page timed out; task re-queued", p.pk)
            transaction.on_commit(partial(generate_recourses.delay, p.pk))


def waiting_check(*, participant: Participant) -> dict[str, Any]:
    """The waiting page's progress, with `timed_out` and `waited_s`; past the study's
    time-out, flags the case and re-queues a stuck task (module docstring)."""
    progress = selectors.participant_progress(participant=participant)
    queued = participant.generation_queued_at
    waited = (timezone.now() - queued).total_seconds() if queued else 0.0
    timeout = participant.study.waiting_timeout_s
    timed_out = participant.state in GENERATING and not progress["ready"] and waited >= timeout
    if timed_out:
        _time_out(participant.pk)
    return {**progress, "timed_out": timed_out, "waited_s": int(waited), "timeout_s": timeout}
