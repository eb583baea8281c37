"""The stored design check of a study (kept apart from `models.py`, which imports it so that
Django registers it): what `recourse_engine.design_check` predicted for one version of the
study's design, and who acknowledged its warnings when the study went live.

A check is tied to the version it checked by `design_key` (a hash of everything the
prediction depends on: pool, decision model, designs, method settings, fallback, stored
fits and the sample); `studyapp.generation.design_check` treats a check whose key differs
from the study's current one as stale.
"""

from __future__ import annotations

from django.db import models

from studyapp.model_fields import user_link


class DesignCheck(models.Model):
    class State(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    study = models.ForeignKey(
        "studyapp.Study", on_delete=models.CASCADE, related_name="design_checks"
    )
    design_key = models.CharField(
        max_length=64, help_text="Hash of what the prediction depends on (stale when changed)."
    )
    study_version = models.DateTimeField(
        help_text="The study's updated_at when the check was asked for."
    )
    sample_size = models.PositiveIntegerField(help_text="Profiles drawn for the check.")
    sample_source = models.CharField(
        max_length=80,
        default="pool",
        help_text="pool, or the slug of the pool-collection study whose answers were drawn.",
    )
    seed = models.BigIntegerField(default=0)
    state = models.CharField(max_length=10, choices=State.choices, default=State.QUEUED)
    progress = models.FloatField(default=0.0, help_text="0..1")
    message = models.CharField(max_length=500, blank=True, default="")
    result = models.JSONField(default=dict, blank=True)
    seconds = models.FloatField(null=True, blank=True)
    requested_by = user_link()
    acknowledged = models.JSONField(
        default=list,
        blank=True,
        help_text="The warnings acknowledged at go-live: [{key, text, value, threshold}].",
    )
    acknowledged_by = user_link()
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        app_label = "studyapp"

    def __str__(self) -> str:
        return f"design check {self.pk} of {self.study_id} ({self.state})"
