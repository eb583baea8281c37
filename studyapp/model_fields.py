"""Field makers the study models and the coding app's models share."""

from __future__ import annotations

from django.conf import settings
from django.db import models


def user_link(related_name: str | None = "+") -> models.ForeignKey:
    """The account that did something (owned, asked, decided): optional, and emptied rather
    than deleting the record when the account is deleted."""
    return models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name=related_name,
    )
