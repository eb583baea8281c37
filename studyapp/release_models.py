"""Columns of the study kinds and the delayed-release mode, kept apart from `models.py` (which
mixes them into Study and Participant) so that each module stays small.

Delayed release (the reference study's two-week review, Tominaga et al. §3.3): recourses are
computed at once but shown only from a scheduled time, in a second session the participant
returns to by link. Pool collection (their App. A): a study whose completed profiles, with
the income item, become another study's counterfactual pool.
"""

from __future__ import annotations

from django.db import models

#: what a study is for
STUDY_KINDS = (
    ("recourse", "Recourse evaluation (profile, rejection, plans to rate)"),
    ("pool_collection", "Pool collection (profile and income only; becomes another study's pool)"),
    ("multi_wave", "Multi-wave recourse (act on a plan, return by link, re-apply: docs/waves.md)"),
)
#: when a participant sees their plans
RELEASE_MODES = (
    ("immediate", "At once (one session)"),
    ("delayed", "Delayed: released at a scheduled time, second session by link"),
)


class StudyKindAndRelease(models.Model):
    """A study's kind and its release schedule (abstract: mixed into Study)."""

    kind = models.CharField(max_length=20, choices=STUDY_KINDS, default="recourse")
    release_mode = models.CharField(max_length=10, choices=RELEASE_MODES, default="immediate")
    release_at = models.DateTimeField(
        null=True, blank=True, help_text="Delayed: release everyone's plans at this time."
    )
    release_after_days = models.PositiveIntegerField(
        null=True, blank=True, help_text="Delayed: release this many days after submission."
    )
    reminder_every_days = models.PositiveSmallIntegerField(
        default=0,
        help_text="Delayed: e-mail a reminder every this many days after release (0: none).",
    )
    max_reminders = models.PositiveSmallIntegerField(default=2)
    return_deadline_days = models.PositiveIntegerField(
        default=14, help_text="Delayed: the second session closes this many days after release."
    )
    waves = models.JSONField(
        null=True, blank=True, default=None,
        help_text="Multi-wave: waves, schedule, model policy per condition (docs/waves.md).",
    )  # fmt: skip

    class Meta:
        abstract = True


class ParticipantRelease(models.Model):
    """A participant's release times (abstract: mixed into Participant)."""

    contact_email = models.EmailField(
        blank=True, default="", help_text="Given for the return link; never exported."
    )
    submitted_at = models.DateTimeField(null=True, blank=True, help_text="Profile submitted.")
    release_due_at = models.DateTimeField(null=True, blank=True)
    released_at = models.DateTimeField(null=True, blank=True)
    return_deadline_at = models.DateTimeField(null=True, blank=True)
    returned_at = models.DateTimeField(null=True, blank=True)
    reminders_sent = models.PositiveSmallIntegerField(default=0)
    last_reminder_at = models.DateTimeField(null=True, blank=True)
    wave = models.PositiveSmallIntegerField(
        default=1, help_text="Multi-wave: the wave the participant is in (1..N)."
    )

    class Meta:
        abstract = True
