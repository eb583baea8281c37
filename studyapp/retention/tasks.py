"""The retention schedule's Celery task, run daily by beat (`CELERY_BEAT_SCHEDULE`)."""

from __future__ import annotations

from celery import shared_task
from django.utils import timezone

from studyapp.retention.service import retention_apply


@shared_task(name="studyapp.tasks.apply_retention", acks_late=True)
def apply_retention() -> dict[str, dict[str, int]]:
    """Delete what every study's retention rules make due now; receipts per study and class,
    and the studies whose run failed (logged; their data stays for the next run)."""
    run = retention_apply(now=timezone.now())
    done: dict[str, dict[str, int]] = {}
    for slug, receipts in run.receipts.items():
        for r in receipts:
            done.setdefault(slug, {})[r.data_class] = r.rows
    return {**done, **{slug: {"failed": 1} for slug in run.failed}}
