"""Celery tasks of the study layer: thin wrappers that call its services (queued with
transaction.on_commit)."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from django.db import transaction

from studyapp.models import DesignCheck
from studyapp.studies import design_check, design_check_run


@shared_task(
    name="studyapp.tasks.run_design_check",
    acks_late=True,
    time_limit=3600,
    soft_time_limit=3500,
)
def run_design_check(check_id: int) -> str:
    """Run a queued design check (fits what it needs first: may take minutes, own limit)."""
    return design_check_run.check_run(check_id=check_id)


def design_check_queue(**kwargs: Any) -> DesignCheck:
    """Create a design check (`design_check.check_create`'s arguments) and send its task once
    the transaction commits; a broker that refuses it is recorded on the check."""
    check = design_check.check_create(**kwargs)

    def send() -> None:
        try:
            run_design_check.delay(check.pk)
        except Exception as exc:  # noqa: BLE001 - a broker down: recorded, not raised
            DesignCheck.objects.filter(pk=check.pk, state=DesignCheck.State.QUEUED).update(
                state=DesignCheck.State.FAILED,
                message=f"the task could not be queued ({exc})"[:500],
            )

    transaction.on_commit(send)
    return check
