"""Tables of a multi-wave study (kind ``multi_wave``, docs/waves.md), kept apart from
`models.py` (which imports them so that Django registers them).

A participant's `Profile` and plans hold their *current* wave (the pages and the worker read
them as in a one-wave study); every wave's record is kept here: the profile scored in it,
the decision and the identity of the model that made it, the plan they chose to follow,
and, from wave 2 on, what they reported changing per profile item. The model in force for a
wave (per study, condition and wave) is stored once, with its hash, so every re-application
of that wave is scored by the same model.
"""

from __future__ import annotations

from django.db import models


class Wave(models.Model):
    """One wave a participant reached: the profile scored, the decision, the model."""

    participant = models.ForeignKey(
        "studyapp.Participant", on_delete=models.CASCADE, related_name="waves"
    )
    number = models.PositiveSmallIntegerField(help_text="1..N")
    condition = models.CharField(max_length=60, blank=True, default="")
    model_policy = models.CharField(max_length=20, default="frozen")
    announced = models.BooleanField(default=False)
    model_hash = models.CharField(max_length=64, blank=True, default="")
    values = models.JSONField(help_text="The profile scored in this wave: item -> option code.")
    decision = models.CharField(max_length=20, help_text="approved | rejected | hypothetical")
    probability = models.FloatField(null=True, blank=True, help_text="Empty for a rule.")
    decided_at = models.DateTimeField()
    first_position = models.PositiveSmallIntegerField(
        default=1, help_text="This wave's plans have positions from here on."
    )
    followed = models.ForeignKey(
        "studyapp.Recourse", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    followed_at = models.DateTimeField(null=True, blank=True)
    next_due_at = models.DateTimeField(
        null=True, blank=True, help_text="When the next wave opens for this participant."
    )
    released_at = models.DateTimeField(null=True, blank=True, help_text="Next wave opened.")

    class Meta:
        app_label = "studyapp"
        ordering = ["participant", "number"]
        constraints = [
            models.UniqueConstraint(fields=["participant", "number"], name="wave_unique_number")
        ]

    def __str__(self) -> str:
        return f"P{self.participant_id} wave {self.number} ({self.decision})"


class WaveChange(models.Model):
    """What a returning participant reported for one profile item before wave `wave`."""

    participant = models.ForeignKey(
        "studyapp.Participant", on_delete=models.CASCADE, related_name="wave_changes"
    )
    wave = models.PositiveSmallIntegerField(help_text="The re-application wave (2..N).")
    item = models.CharField(max_length=60)
    before = models.FloatField()
    after = models.FloatField()
    planned = models.FloatField(null=True, blank=True, help_text="What the followed plan asked.")
    effort = models.PositiveSmallIntegerField(null=True, blank=True, help_text="1..7")
    flag = models.CharField(
        max_length=12, blank=True, default="", help_text="outside | fixed | direction (marked)."
    )
    reported_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "studyapp"
        ordering = ["participant", "wave", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["participant", "wave", "item"], name="wave_change_unique_item"
            )
        ]

    def __str__(self) -> str:
        return f"P{self.participant_id} wave {self.wave} {self.item}: {self.before}->{self.after}"


class WaveModel(models.Model):
    """The decision model in force for one wave of one condition (frozen: the study's)."""

    study = models.ForeignKey(
        "studyapp.Study", on_delete=models.CASCADE, related_name="wave_models"
    )
    condition = models.CharField(max_length=60, blank=True, default="")
    wave = models.PositiveSmallIntegerField()
    policy = models.CharField(max_length=20)
    model_hash = models.CharField(max_length=64)
    blob = models.BinaryField(null=True, blank=True, editable=False, help_text="Empty: frozen.")
    trained_rows = models.PositiveIntegerField(
        default=0, help_text="Retrained: participants' profiles added to the pool."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "studyapp"
        ordering = ["study", "condition", "wave"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "condition", "wave"], name="wave_model_unique_wave"
            )
        ]

    def __str__(self) -> str:
        return f"{self.study_id}/{self.condition or '-'} wave {self.wave} ({self.policy})"


def plan_offset(participant_id: int, wave: int) -> int:
    """Positions before the participant's current wave's plans (0 in wave 1 and outside a
    multi-wave study): each wave's plans follow the last one's, so page keys stay unique."""
    if wave <= 1:
        return 0
    first = (
        Wave.objects.filter(participant_id=participant_id, number=wave)
        .values_list("first_position", flat=True)
        .first()
    )
    return int(first or 1) - 1
