"""A model whose `updated_at` changes on every write, so that it can serve as a version.

Participant requests keep studies in a per-process cache keyed by `(pk, updated_at)`
(`participation.study_cache`); that is right only if no write leaves `updated_at` as it was.
`auto_now` alone does not promise it: `save(update_fields=[...])` without the column and
`QuerySet.update()` both skip it. This mixin closes both gaps.
"""

from __future__ import annotations

from typing import Any

from django.db import models
from django.utils import timezone


class VersionedQuerySet(models.QuerySet):
    def update(self, **kwargs: Any) -> int:
        kwargs.setdefault("updated_at", timezone.now())
        return super().update(**kwargs)


class Versioned(models.Model):
    """Abstract: needs an `updated_at = DateTimeField(auto_now=True)` in the model."""

    objects = VersionedQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        fields = kwargs.get("update_fields")
        if fields is not None and "updated_at" not in fields:
            kwargs["update_fields"] = [*fields, "updated_at"]
        super().save(*args, **kwargs)
