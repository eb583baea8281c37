"""Tables of the integrity signals, kept apart from `models.py` (which mixes `StudyIntegrity`
into Study and imports the rest so that Django registers them): the study's switch and what
the page script (`studyapp/integrity.js`) sent with each submitted page.

A record holds counts and durations only — how often something was pasted into a field and
how many characters, how often the participant left the window or the tab, how long they
typed and how long before they first answered each item — never the pasted text or the
keys pressed. It is paradata: the retention schedule's `paradata` class deletes it, and it
goes with the participant.
"""

from __future__ import annotations

from django.db import models


class StudyIntegrity(models.Model):
    """The study's switch for the integrity signals (abstract: mixed into Study)."""

    integrity_signals = models.BooleanField(
        default=False,
        help_text="Record paste, leaving the page, typing time and item latency on the "
        "rating and question pages (the consent page says so).",
    )

    class Meta:
        abstract = True


class IntegrityRecord(models.Model):
    """One page's signals of one participant, summed over the page's submissions (a form
    sent back with a problem is submitted again)."""

    participant = models.ForeignKey(
        "studyapp.Participant", on_delete=models.CASCADE, related_name="integrity_records"
    )
    page = models.CharField(max_length=40)
    submissions = models.PositiveIntegerField(default=1)
    page_ms = models.PositiveIntegerField(default=0, help_text="Time the page was open (ms).")
    blurs = models.PositiveIntegerField(default=0, help_text="Times the window lost focus.")
    hidden = models.PositiveIntegerField(default=0, help_text="Times the tab was hidden.")
    away_ms = models.PositiveIntegerField(default=0, help_text="Time away (hidden or blurred).")
    pastes = models.PositiveIntegerField(default=0, help_text="Paste events, all fields.")
    pasted_chars = models.PositiveIntegerField(default=0)
    typing_ms = models.PositiveIntegerField(default=0, help_text="Time spent typing, all fields.")
    fields = models.JSONField(
        default=dict,
        blank=True,
        help_text="Field -> {pastes, pasted_chars, inputs, typing_ms, first_ms}.",
    )
    received_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["participant", "pk"]
        app_label = "studyapp"
        constraints = [
            models.UniqueConstraint(fields=["participant", "page"], name="integrity_unique_page")
        ]

    def __str__(self) -> str:
        return f"P{self.participant_id} {self.page}: {self.pastes} pastes, {self.hidden} hidden"
