"""Tables of the Prolific connection (docs/prolific.md), kept apart from `models.py`, which
imports them so that Django registers them: a study's link to its Prolific study (or two, for
a delayed-release study's two sessions) with the API token encrypted, and the ledger of every
action sent to Prolific.

The ledger is what makes an action idempotent: a row with a unique key is written *before*
the request goes out, so a second request for the same thing (a double click, a rerun of the
command, a retry after a crash) finds the row and sends nothing. Prolific's own bonus payment
(`/bulk-bonus-payments/{id}/pay/`) is not idempotent, which is why every action goes through it.
"""

from __future__ import annotations

from django.db import models

from studyapp.model_fields import user_link

PROLIFIC_API = "https://api.prolific.com"


class PanelConnection(models.Model):
    """A study's Prolific study (and the second session's, for delayed release) and the
    researcher's API token, encrypted with the site's key (never shown again, never exported)."""

    study = models.OneToOneField(
        "studyapp.Study", on_delete=models.CASCADE, related_name="panel_connection"
    )
    panel_study_id = models.CharField(
        max_length=64, help_text="The Prolific study id (the first session's, if two)."
    )
    second_study_id = models.CharField(
        max_length=64,
        blank=True,
        default="",
        help_text="Delayed release: the Prolific study of the second session (blank: one study, "
        "the second session paid as a bonus).",
    )
    token_encrypted = models.BinaryField(editable=False, help_text="Fernet token of the API key.")
    api_url = models.CharField(max_length=200, default=PROLIFIC_API)
    connected_by = user_link()
    connected_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "studyapp"

    def __str__(self) -> str:
        return f"{self.study_id} -> Prolific {self.panel_study_id}"


class PanelAction(models.Model):
    """One action sent (or to be sent) to Prolific: recorded before sending, under a key that
    is never sent twice."""

    class Kind(models.TextChoices):
        APPROVE = "approve", "Approve"
        REJECT = "reject", "Reject"
        SCREEN_OUT = "screen_out", "Screen out"
        REQUEST_RETURN = "request_return", "Ask to return"
        BONUS_SETUP = "bonus_setup", "Set up bonuses"
        BONUS_PAY = "bonus_pay", "Pay bonuses"

    class State(models.TextChoices):
        PENDING = "pending", "Recorded, not yet answered"
        SENT = "sent", "Sent and accepted"
        FAILED = "failed", "Refused or unreachable"

    study = models.ForeignKey(
        "studyapp.Study", on_delete=models.CASCADE, related_name="panel_actions"
    )
    key = models.CharField(max_length=200, unique=True, help_text="The idempotency key.")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    panel_study_id = models.CharField(max_length=64)
    submission_ids = models.JSONField(default=list, blank=True)
    payload = models.JSONField(default=dict, blank=True, help_text="What was sent (no token).")
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0, help_text="HTTP requests made.")
    response = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True, default="")
    by = models.CharField(max_length=150, help_text="Who: the account, or the command line.")
    by_user = user_link()
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        app_label = "studyapp"
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["study", "kind"])]

    def __str__(self) -> str:
        return f"{self.kind} {len(self.submission_ids)} ({self.state})"
