"""The coding's settings per study, memos per answer, and the history tables: each change of
the codebook, of a coder's coding and of a final code appends a row here (never updated or
deleted by the app), so an edited code, an undone coding or a replaced resolution keeps what
it was, who changed it and when. Rows name their answer by its unit (`<recourse id>:<field>`
or `p<participant id>:<field>`) as text, so they outlive an edit of the row they describe.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from studyapp.model_fields import user_link
from studyapp.models import Evaluation, Participant, Study


class CodingSettings(models.Model):
    """How a study is coded. `blind`: assigned coders see neither method, condition nor
    strategy until every coder has finished; `show_plan`: they see the plan (the changed
    items, sparsity, proximity) beside the answer; `fields`: the free-text fields to code
    (empty: every one)."""

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="coding_settings")
    blind = models.BooleanField(
        default=True,
        help_text="Coders see neither method, condition nor strategy until all have finished.",
    )
    show_plan = models.BooleanField(
        default=True, help_text="Coders see the plan (changed items) beside the answer."
    )
    fields = models.JSONField(
        default=list, blank=True, help_text="Free-text fields to code; empty: every one."
    )
    changed_by = user_link()
    changed_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"coding settings of {self.study.slug}"


class Memo(models.Model):
    """A researcher's note on one answer. While coders are blind a coder sees only their own."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="coding_memos")
    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="+")
    evaluation = models.ForeignKey(
        Evaluation, on_delete=models.CASCADE, related_name="+", null=True, blank=True
    )
    field = models.CharField(max_length=70)
    unit = models.CharField(max_length=100)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    text = models.TextField()
    written_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "unit", "written_at", "pk"]
        indexes = [models.Index(fields=["study", "unit"], name="coding_memo_unit")]

    def __str__(self) -> str:
        return f"memo on {self.unit} by {self.author}"


class CodeChange(models.Model):
    """A codebook entry as it was after one change (added, edited, deleted)."""

    class Action(models.TextChoices):
        ADDED = "added"
        EDITED = "edited"
        DELETED = "deleted"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="+")
    code = models.CharField(max_length=40)
    action = models.CharField(max_length=10, choices=Action.choices)
    definition = models.TextField(blank=True, default="")
    example = models.TextField(blank=True, default="")
    by = user_link()
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "at", "pk"]


class CodingChange(models.Model):
    """A coder's codes of one answer after one change: coded, edited, undone (codes empty),
    or a code taken out because it was deleted from the codebook."""

    class Action(models.TextChoices):
        CODED = "coded"
        EDITED = "edited"
        UNDONE = "undone"
        CODE_DELETED = "code_deleted"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="+")
    unit = models.CharField(max_length=100)
    coder = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    action = models.CharField(max_length=14, choices=Action.choices)
    codes = models.TextField(blank=True, default="", help_text="';'-joined, sorted.")
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "unit", "at", "pk"]
        indexes = [models.Index(fields=["study", "unit"], name="coding_change_unit")]


class FinalCodeChange(models.Model):
    """One resolution of an answer, kept when a later one replaces it."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="+")
    unit = models.CharField(max_length=100)
    codes = models.TextField(blank=True, default="", help_text="';'-joined, sorted.")
    decided_by = user_link()
    decided_at = models.DateTimeField()
    note = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["study", "unit", "decided_at", "pk"]
        indexes = [models.Index(fields=["study", "unit"], name="coding_final_change_unit")]
