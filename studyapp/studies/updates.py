"""Study writes the API needs beyond `services` and `study_setup`: changing settings (with
the draft-only rule), sharing, deleting an empty study.

Kept apart from the views (HackSoft: views validate and call; writes live in functions) and
from the serializers, so the console can call the same rules. A candidate for
`studyapp/services.py`, which this helper does not own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.db import transaction

from studyapp.models import Condition, Study
from studyapp.studies import services, study_setup
from studyapp.studies.services import StudyError

#: settings that decide what participants see and get; frozen once the study goes live
DRAFT_ONLY = (
    "design",
    "decision_model",
    "seed",
    "language",
    "texts",
    "consent_version",
    "attention_checks",
    "attention_max_failures",
    "attention_rule",
    "conditions",
)
#: settings a researcher may change at any time (a title, the panel's codes and redirects)
ALWAYS = ("title", "outcome_codes", "panel_param", "assignment_timeout_minutes")


class StudyFrozen(StudyError):
    """A change to a draft-only setting of a live or closed study."""


def _merge_codes(
    old: Mapping[str, Mapping[str, str]], new: Mapping[str, Mapping[str, str]]
) -> dict[str, dict[str, str]]:
    merged = {k: dict(v) for k, v in (old or {}).items()}
    for outcome, entry in new.items():
        merged.setdefault(outcome, {"code": "", "redirect_url": ""}).update(entry)
    return merged


def _replace_conditions(study: Study, conditions: Sequence[Mapping[str, str]]) -> None:
    if study.participants.exclude(condition="").exists():
        raise StudyFrozen(
            f"study {study.slug}: participants are already assigned to conditions; "
            "duplicate the study to change them"
        )
    study.conditions.all().delete()
    Condition.objects.bulk_create(
        Condition(study=study, name=c["name"], design=c.get("design", ""), position=i)
        for i, c in enumerate(conditions)
    )


def study_update(*, study: Study, changes: Mapping[str, Any]) -> Study:
    """Apply validated setting changes, all or nothing; draft-only ones on a draft only."""
    unknown = sorted(set(changes) - set(DRAFT_ONLY) - set(ALWAYS))
    if unknown:
        raise StudyError(f"cannot change {', '.join(unknown)} here")
    with transaction.atomic():
        locked = Study.objects.select_for_update().get(pk=study.pk)
        frozen = [k for k in DRAFT_ONLY if k in changes]
        if frozen and locked.state != Study.State.DRAFT:
            raise StudyFrozen(
                f"study {locked.slug} is {locked.state}: {', '.join(frozen)} cannot change "
                "once it has gone live (duplicate it to make a changed copy)"
            )
        if "design" in changes:
            services.study_update_design(study=locked, design=changes["design"])
        if "decision_model" in changes:
            study_setup.study_set_decision_model(study=locked, name=changes["decision_model"])
        if "conditions" in changes:
            _replace_conditions(locked, changes["conditions"])
        simple = [k for k in changes if k not in ("design", "decision_model", "conditions")]
        for name in simple:
            value = changes[name]
            if name == "outcome_codes":
                value = _merge_codes(locked.outcome_codes, value)
            elif name == "texts":
                value = {lang: dict(t) for lang, t in value.items()}
            setattr(locked, name, value)
        if simple:
            locked.save(update_fields=[*simple, "updated_at"])
    study.refresh_from_db()
    return study


def study_share(*, study: Study, user: Any, remove: bool = False) -> Study:
    """Share the study with another researcher (or stop sharing); the owner is never listed."""
    if study.owner_id == user.pk:
        raise StudyError(f"{user.username} owns study {study.slug}; owners are not shared with")
    if remove:
        study.shared_with.remove(user)
    else:
        study.shared_with.add(user)
    return study


def study_delete(*, study: Study) -> None:
    """Delete a study nobody has taken part in (participants' data is never dropped here)."""
    with transaction.atomic():
        locked = Study.objects.select_for_update().get(pk=study.pk)
        n = locked.participants.count()
        if n:
            raise StudyError(
                f"study {locked.slug} has {n} participant(s); close it instead of deleting it"
            )
        locked.delete()
