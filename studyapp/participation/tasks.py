"""Celery tasks of the participant flow: the delayed-release schedule (run by beat)."""

from __future__ import annotations

from celery import shared_task
from django.utils import timezone

from studyapp.participation import release, waves


@shared_task(name="studyapp.tasks.release_due", acks_late=True)
def release_due() -> dict[str, int]:
    """Release, remind and expire delayed-release participants whose time has come; open
    and close multi-wave studies' waves."""
    now = timezone.now()
    done = {**release.tick(now=now), **waves.tick(now=now)}  # multi-wave studies' waves too
    return {what: len(ids) for what, ids in done.items()}
