"""Duplicating a study: a new draft with the same setup, for changing what froze when the
original went live.

The copy takes the rows as they are (not re-validated: they were accepted once and the
participant side reads them as stored), with fresh completion codes so that a panel never
credits one study's participants with the other's code.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import transaction
from django.utils import timezone

from studyapp.models import CODED, Condition, Study, default_outcome_codes
from studyapp.studies.services import slug_check
from studyapp.studies.updates import quotas_of, quotas_write


def _fresh_codes(old: Mapping[str, Mapping[str, str]]) -> dict[str, dict[str, str]]:
    """New completion codes; redirect URLs kept, with an old code in them replaced."""
    codes = default_outcome_codes()
    for outcome in CODED:
        prev = old.get(outcome, {}) if isinstance(old, Mapping) else {}
        url = str(prev.get("redirect_url", ""))
        if prev.get("code") and prev["code"] in url:
            url = url.replace(prev["code"], codes[outcome]["code"])
        codes[outcome]["redirect_url"] = url
    return codes


#: what a copy takes over as it is (its slug, state, owner and outcome codes are its own)
COPIED = (
    "title", "language", "languages", "schema", "schema_hash", "texts", "consent_version", "design",
    "decision_model", "decision_model_blob", "decision_model_info", "method_params", "method_fallback", "pool_csv",
    "pool_hash", "pool_rows", "seed",
    "panel_param", "assignment_timeout_minutes", "attention_checks", "attention_max_failures",
    "attention_rule", "page_order", "questions", "random_item_order", "assignment",
    "waiting_timeout_s", "page_timeouts", "page_min_seconds", "approved_branch",
    "design_check_thresholds",
    "kind", "release_mode", "release_after_days", "reminder_every_days", "max_reminders",
    "return_deadline_days", "time_zone", "retention", "integrity_signals", "waves",
)  # fmt: skip


def _release_at(study: Study) -> dict[str, Any]:
    """A fixed release date still ahead is copied; one that has passed is not (it would
    release the copy's participants at once): the copy shows plans at once until a researcher
    sets a new date."""
    if study.release_at is None or study.release_at > timezone.now():
        return {"release_at": study.release_at}
    return {"release_at": None, "release_mode": "immediate"}


def study_duplicate(*, study: Study, slug: str, owner: Any) -> Study:
    """A draft copy (schema, texts, design, pool, model, conditions, quotas, attention checks;
    fresh outcome codes), owned by `owner`, without participants or sharing."""
    slug = slug_check(slug)
    with transaction.atomic():
        copy = Study.objects.create(
            slug=slug,
            state=Study.State.DRAFT,
            owner=owner if getattr(owner, "pk", None) else None,
            outcome_codes=_fresh_codes(study.outcome_codes),
            **{**{name: getattr(study, name) for name in COPIED}, **_release_at(study)},
        )
        for cond in study.conditions.all():
            Condition.objects.create(
                study=copy, name=cond.name, design=cond.design, position=cond.position
            )
        quotas_write(copy, quotas_of(study))
    return copy
