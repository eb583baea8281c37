"""Tables of a study's history, kept apart from `models.py` (which imports them so that Django
registers them): every version of its definition, and every registration (pre-registration
bundle) frozen from one.

A version is the study file document (`definition.study_file`) as it was after a change,
numbered from 1 per study, with who made the change and when; a new one is recorded only
when the document's hash differs from the last one's (`prereg.history`). A registration keeps
the bundle's exact bytes, so its SHA-256 is the same however often it is exported.
"""

from __future__ import annotations

from django.db import models

from studyapp.model_fields import user_link


class StudyVersion(models.Model):
    """One version of a study's definition."""

    study = models.ForeignKey("studyapp.Study", on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField(help_text="1, 2, ... per study.")
    sha256 = models.CharField(max_length=64, help_text="SHA-256 of the canonical document.")
    document = models.JSONField(help_text="The study file document of this version.")
    by = user_link(None)
    at = models.DateTimeField(auto_now_add=True)
    note = models.CharField(max_length=300, blank=True, default="")

    class Meta:
        ordering = ["study", "number"]
        app_label = "studyapp"
        constraints = [
            models.UniqueConstraint(fields=["study", "number"], name="study_version_unique")
        ]

    def __str__(self) -> str:
        return f"{self.study_id} v{self.number}"


class StudyRegistration(models.Model):
    """A frozen pre-registration bundle: the study file, the analysis plan, their hash."""

    class Reason(models.TextChoices):
        LIVE = "live", "The study went live"
        REGISTER = "register", "Registered by a researcher"

    study = models.ForeignKey(
        "studyapp.Study", on_delete=models.CASCADE, related_name="registrations"
    )
    version = models.ForeignKey(StudyVersion, on_delete=models.RESTRICT, related_name="+")
    sha256 = models.CharField(max_length=64, help_text="SHA-256 of the bundle's bytes.")
    bundle = models.TextField(help_text="The bundle as canonical JSON, exactly as hashed.")
    reason = models.CharField(max_length=10, choices=Reason.choices)
    by = user_link(None)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "at", "pk"]
        app_label = "studyapp"

    def __str__(self) -> str:
        return f"{self.study_id} registration {self.sha256[:12]}"
