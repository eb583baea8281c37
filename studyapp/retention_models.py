"""Tables of data protection, kept apart from `models.py` (which mixes `StudyRetention` into
Study and imports the rest so that Django registers them): the study's retention rules and
close time, the receipt of every deletion, and the export folders written to disk.

A receipt says what was deleted (the data class), how much (participants, rows), when,
under which rule and by whom or what (the daily schedule, a withdrawal, a researcher). It
holds no participant data, only counts, former participant numbers and file paths, so it
outlives what it describes; a study's receipts are in its export (`deletion_receipts.csv`)
and on its console page.
"""

from __future__ import annotations

from django.db import models

from studyapp.model_fields import user_link


class StudyRetention(models.Model):
    """A study's retention rules and the time it last closed (abstract: mixed into Study)."""

    retention = models.JSONField(
        default=dict,
        blank=True,
        help_text="Data class -> {days, after}: how long it is kept (none: until deleted by hand).",
    )
    closed_at = models.DateTimeField(
        null=True, blank=True, help_text="When the study last closed (rules after the close)."
    )

    class Meta:
        abstract = True


class DeletionReceipt(models.Model):
    """One deletion of one data class in one study: the schedule's, a withdrawal's or a
    researcher's."""

    class DataClass(models.TextChoices):
        PARTICIPANT = "participant", "The whole participant"
        ANSWERS = "answers", "Answers"
        FREE_TEXT = "free_text", "Free-text answers"
        PARADATA = "paradata", "Paradata"
        PANEL_ID = "panel_id", "Panel id"
        CONTACT = "contact", "Contact address"
        EXPORT_FILES = "export_files", "Export files on disk"

    class By(models.TextChoices):
        SCHEDULE = "schedule", "The retention schedule"
        WITHDRAWAL = "withdrawal", "The participant's withdrawal"
        RESEARCHER = "researcher", "A researcher"

    study = models.ForeignKey(
        "studyapp.Study", null=True, on_delete=models.SET_NULL, related_name="deletion_receipts"
    )
    study_slug = models.CharField(max_length=50, help_text="Kept when the study is deleted.")
    data_class = models.CharField(max_length=20, choices=DataClass.choices)
    rule = models.CharField(max_length=300, help_text="The rule or request, in words.")
    by = models.CharField(max_length=12, choices=By.choices)
    by_user = user_link(None)
    participants = models.PositiveIntegerField(help_text="Participants whose data went.")
    rows = models.PositiveIntegerField(help_text="Rows deleted plus rows blanked (or files).")
    detail = models.JSONField(default=dict, blank=True, help_text="Table or field -> rows.")
    participant_numbers = models.JSONField(
        default=list, blank=True, help_text="The participants' ids (as in the export)."
    )
    files = models.JSONField(default=list, blank=True, help_text="Export files deleted.")
    as_of = models.DateTimeField(help_text="The time the rule was measured at.")
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-at", "-pk"]
        app_label = "studyapp"
        indexes = [models.Index(fields=["study", "at"])]

    def __str__(self) -> str:
        return f"{self.study_slug}: {self.data_class} of {self.participants} ({self.by})"


class ExportRecord(models.Model):
    """An export written to disk by `export_study`: where, when and what it holds, so the
    schedule can delete its files once the data in them is due."""

    study = models.ForeignKey(
        "studyapp.Study", on_delete=models.CASCADE, related_name="export_records"
    )
    folder = models.CharField(max_length=1000)
    files = models.JSONField(default=list, help_text="File names in the folder.")
    classes = models.JSONField(default=list, help_text="The data classes the files hold.")
    participants = models.PositiveIntegerField(default=0)
    earliest_end = models.DateTimeField(
        null=True, blank=True, help_text="The earliest end among the participants exported."
    )
    written_at = models.DateTimeField()
    deleted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-written_at", "-pk"]
        app_label = "studyapp"

    def __str__(self) -> str:
        return f"export of {self.study_id} in {self.folder} ({len(self.files)} files)"
