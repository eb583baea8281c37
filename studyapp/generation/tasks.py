"""Celery tasks: thin wrappers that call services (queued with transaction.on_commit).

`queue_generation` is how a participant's task is sent: it never raises to the participant.
When the broker is down at that moment, `delay` raises (Redis: a connection error; the
embedded broker: a database error); the error is logged, the participant stays "queued",
and the sweeper (`sweep_waiting`, run by beat) queues the task again once the broker is
back, since the task is idempotent.

`generate_recourses` is acknowledged late (a worker that dies mid-task gets it re-delivered)
and idempotent (the service stores recourses once), retries transient database errors, and
looks again every few seconds while a method's fit that it needs is still running.
"""

from __future__ import annotations

import logging

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.db import InterfaceError, OperationalError

from studyapp.generation import services

log = logging.getLogger(__name__)

#: seconds between looks at a method's fit that a participant waits for
FIT_RETRY_S = 3


@shared_task(
    name="studyapp.tasks.generate_recourses",  # the name queued messages carry: kept stable
    bind=True,
    acks_late=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=1,
    retry_backoff_max=30,
    retry_jitter=True,
    max_retries=5,
)
def generate_recourses(self, participant_id: int) -> str:
    try:
        return services.recourses_generate(
            participant_id=participant_id, may_wait=not self.request.is_eager
        )
    except services.FitPending as exc:
        # a method's fit is still running: look again shortly (the service stops waiting)
        looks = self.request.retries + int(services.fit_wait_s() / FIT_RETRY_S) + 2
        raise self.retry(exc=exc, countdown=FIT_RETRY_S, max_retries=looks) from None
    except (OperationalError, InterfaceError) as exc:
        if self.request.retries >= self.max_retries:
            return services.recourses_fail(
                participant_id=participant_id, error=f"database unavailable: {exc}"
            )
        raise
    except SoftTimeLimitExceeded:
        return services.recourses_fail(
            participant_id=participant_id, error="recourse search exceeded the task time limit"
        )


@shared_task(
    name="studyapp.tasks.fit_balanced_methods",
    acks_late=True,
    time_limit=3600,
    soft_time_limit=3500,
)
def fit_balanced_methods(study_id: int) -> dict[str, str]:
    """Fit a live study's pool models and recourse methods (may take minutes: own limit)."""
    from studyapp.generation import method_fitting

    return method_fitting.fits_run(study_id=study_id)


def queue_generation(participant_id: int) -> bool:
    """Send a participant's recourse task; False (logged) when the broker refused it."""
    try:
        generate_recourses.delay(participant_id)
    except Exception as exc:  # noqa: BLE001 - any broker failure: the sweeper queues it again
        log.warning(
            "participant %s: the recourse task could not be queued (%s)", participant_id, exc
        )
        return False
    return True


@shared_task(name="studyapp.tasks.sweep_waiting", ignore_result=True)
def sweep_waiting() -> int:
    """Queue again the recourse task of every participant whose task went quiet (beat)."""
    from studyapp.generation import sweeper

    return len(sweeper.sweep(send=queue_generation))
