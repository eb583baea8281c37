"""Tables of the qualitative coding: a study's codebook, its coders, every coder's codes of
each free-text answer, and the final code a researcher resolved them into.

An answer (a coding unit) is one free-text field of one evaluation (`acceptance_why`,
`action_why`, or a researcher-defined text item of the plan page, `q_<key>`) or of one
participant (a text item of the questionnaire before or after the plans, `q_<key>`; its
`evaluation` is empty). Writes go through `services.py`, which refuses bad input with a
message; the constraints below keep the tables right whatever writes them. Every change of
the codebook, of a coding and of a final code leaves a row in a history table
(`history_models.py`), so nothing a coder or resolver did is lost.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q

from studyapp.model_fields import user_link
from studyapp.models import Evaluation, Participant, Study


class Code(models.Model):
    """One code of a study's codebook."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="coding_codes")
    name = models.CharField(
        max_length=40, help_text="1-40 lower-case letters, digits or '_', starting with a letter."
    )
    definition = models.TextField(blank=True, default="")
    example = models.TextField(blank=True, default="")
    position = models.PositiveIntegerField(default=0)
    created_by = user_link()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "position", "name"]
        constraints = [
            models.UniqueConstraint(fields=["study", "name"], name="coding_code_unique_name")
        ]

    def __str__(self) -> str:
        return self.name


class CoderAssignment(models.Model):
    """A researcher assigned to code a study's answers; `finished_at` once they say they are
    done. Each coder is blind to the others' codes until every assigned coder is done."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="coder_assignments")
    coder = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="coder_assignments"
    )
    assigned_by = user_link()
    assigned_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["study", "coder__username"]
        constraints = [
            models.UniqueConstraint(fields=["study", "coder"], name="coding_assignment_unique")
        ]

    def __str__(self) -> str:
        return f"{self.study.slug}: {self.coder}"


class Coding(models.Model):
    """One coder's codes of one answer (possibly none: "coded, no code applies")."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="codings")
    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="codings")
    evaluation = models.ForeignKey(
        Evaluation, on_delete=models.CASCADE, related_name="codings", null=True, blank=True
    )
    field = models.CharField(max_length=70)
    coder = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="codings"
    )
    codes = models.ManyToManyField(Code, blank=True, related_name="codings")
    coded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "evaluation", "field", "coder__username"]
        constraints = [
            models.UniqueConstraint(
                fields=["evaluation", "field", "coder"], name="coding_once_per_coder"
            ),
            models.UniqueConstraint(
                fields=["participant", "field", "coder"],
                condition=Q(evaluation__isnull=True),
                name="coding_once_per_coder_participant",
            ),
        ]

    def __str__(self) -> str:
        return f"{unit_of(self)} by {self.coder}"


class FinalCode(models.Model):
    """The code an answer was resolved into, with who decided it and when."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="final_codes")
    participant = models.ForeignKey(
        Participant, on_delete=models.CASCADE, related_name="final_codes"
    )
    evaluation = models.ForeignKey(
        Evaluation, on_delete=models.CASCADE, related_name="final_codes", null=True, blank=True
    )
    field = models.CharField(max_length=70)
    codes = models.ManyToManyField(Code, blank=True, related_name="final_codes")
    decided_by = user_link()
    decided_at = models.DateTimeField()
    note = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["study", "evaluation", "field"]
        constraints = [
            models.UniqueConstraint(fields=["evaluation", "field"], name="coding_final_once"),
            models.UniqueConstraint(
                fields=["participant", "field"],
                condition=Q(evaluation__isnull=True),
                name="coding_final_once_participant",
            ),
        ]

    def __str__(self) -> str:
        return f"final {unit_of(self)}"


def unit_of(row: Any) -> str:
    """The unit name of a coding or final code: `<recourse id>:<field>` (load `evaluation`
    with it) or `p<participant id>:<field>` for a questionnaire answer."""
    if row.evaluation_id is not None:
        return f"{row.evaluation.recourse_id}:{row.field}"
    return f"p{row.participant_id}:{row.field}"


from studyapp.coding.history_models import (  # noqa: E402  (Django finds models here)
    CodeChange,
    CodingChange,
    CodingSettings,
    FinalCodeChange,
    Memo,
)

__all__ = [
    "Code",
    "CodeChange",
    "CoderAssignment",
    "Coding",
    "CodingChange",
    "CodingSettings",
    "FinalCode",
    "FinalCodeChange",
    "Memo",
    "unit_of",
]
