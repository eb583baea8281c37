"""A returning participant's report of what they changed, and their re-application
(multi-wave studies, `participation.waves`).

Each profile item is reported as its new option or "no change". A value that is no option of
the item is refused (it could not be scored). A change to a fixed item, or against an item's
up/down constraint, is refused with the reason, or accepted and marked (``flag``) when the
study says "mark" (``constraint_breaks``). Nothing is stored unless the whole report is
accepted; then the changes, the new wave's profile and its decision are stored at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from functools import partial
from typing import Any

from django.db import transaction
from django.db.models import Max
from django.utils.translation import gettext as _

from recourse_engine import ModelError
from studyapp.definition import engine_objects, outcomes
from studyapp.models import Participant, Profile, Recourse
from studyapp.participation import waves
from studyapp.participation.services import RejectedSubmission
from studyapp.wave_models import Wave, WaveChange

S = Participant.State
G = Participant.Generation
#: the effort question's scale
EFFORT = (1, 7)


def change_flag(item: Any, before: float, after: float) -> tuple[str, str]:
    """("", "") for an allowed report; else (flag, reason): outside (no option of the item),
    fixed (the item cannot change), direction (against its up/down constraint)."""
    if not bool(item.valid([after])[0]):
        shown = f"{after:g}"
        return "outside", _("%(item)s: %(value)s is not one of its options.") % {
            "item": item.label, "value": shown,
        }  # fmt: skip
    if after == before:
        return "", ""
    if item.constraint == "fixed":
        return "fixed", _("%(item)s cannot change.") % {"item": item.label}
    if item.constraint == "up" and after < before:
        return "direction", _("%(item)s can only go up.") % {"item": item.label}
    if item.constraint == "down" and after > before:
        return "direction", _("%(item)s can only go down.") % {"item": item.label}
    return "", ""


def _checked(
    study: Any,
    schema: Any,
    before: Mapping[str, float],
    reported: Mapping[str, float | None],
    efforts: Mapping[str, int | None],
) -> tuple[dict[str, float], dict[str, str], dict[str, int | None]]:
    """The new profile, the marks and the efforts of a report; RejectedSubmission naming
    every problem (nothing stored)."""
    settings = waves.settings_of(study)
    unknown = sorted(set(reported) - set(schema.keys))
    missing = [it.label for it in schema.items if it.key not in reported]
    if unknown or missing:
        raise RejectedSubmission(
            _("The form was altered and could not be used; nothing was stored.")
            if unknown
            else _("Please answer every item; missing: %(items)s.") % {"items": ", ".join(missing)}
        )
    after, flags, effort, problems = {}, {}, {}, []
    for item in schema.items:
        old = float(before[item.key])
        value = reported[item.key]
        new = old if value is None else float(value)
        flag, reason = change_flag(item, old, new)
        if flag and (flag in waves.ALWAYS_REFUSED or settings.constraint_breaks == "refuse"):
            problems.append(reason)
        after[item.key] = new if item.is_numeric else int(new)
        flags[item.key] = flag
        given = efforts.get(item.key)
        if given is not None and not EFFORT[0] <= int(given) <= EFFORT[1]:
            problems.append(_("%(item)s: the effort must be 1 to 7.") % {"item": item.label})
        changed = new != old
        if settings.effort and changed and given is None:
            problems.append(
                _("%(item)s: please say how much effort the change took.") % {"item": item.label}
            )
        effort[item.key] = int(given) if (given is not None and changed) else None
    if problems:
        raise RejectedSubmission(" ".join([*problems, _("Nothing was stored.")]))
    return after, flags, effort


def changes_submit(
    *,
    participant: Participant,
    reported: Mapping[str, float | None],
    efforts: Mapping[str, int | None] | None = None,
    now: datetime,
) -> Participant:
    """Store the report, score the updated profile with the model in force for the new wave,
    and go on: approved -> the approved ending (its own code); rejected -> the decision page
    with new plans being generated, as in wave 1. A policy that cannot be served
    (the engine's ModelError) is refused and nothing is stored, so the participant can try
    again once the study is fixed."""
    from studyapp.generation.tasks import queue_generation

    p0 = waves.open_if_due(participant=participant, now=now)
    if p0.state != S.WAVE_CHANGES:
        raise RejectedSubmission(_("The next round is not open yet; nothing was stored."))
    study = p0.study
    schema = engine_objects.schema_of(study.schema)
    wave_now = waves.current_wave(p0)
    before = dict(wave_now.values)
    after, flags, effort = _checked(study, schema, before, reported, efforts or {})
    number = p0.wave + 1
    try:
        model, row = waves.model_in_force(study, p0.condition, number)
    except (ModelError, engine_objects.StudyConfigError) as exc:
        raise RejectedSubmission(
            _("The study cannot score your application at the moment (%(why)s); nothing "
              "was stored. Please try again later.") % {"why": str(exc)}
        ) from None  # fmt: skip
    rejected, probability = waves.score(model, after, schema, p0.income_jpy)
    planned: dict[str, float] = {}
    if wave_now.followed_id is not None:
        plan = Recourse.objects.filter(pk=wave_now.followed_id).first()
        if plan is not None:
            planned = {k: float(plan.values[k]) for k in plan.changed}
    policy, announce = waves.policy_of(study, p0.condition)
    with transaction.atomic():
        p = waves._locked(p0, S.WAVE_CHANGES)
        WaveChange.objects.bulk_create(
            WaveChange(
                participant=p,
                wave=number,
                item=k,
                before=float(before[k]),
                after=float(after[k]),
                planned=planned.get(k),
                effort=effort[k],
                flag=flags[k],
            )  # fmt: skip
            for k in schema.keys
        )
        first = (p.recourses.aggregate(m=Max("position"))["m"] or 0) + 1
        Wave.objects.create(
            participant=p, number=number, condition=p.condition, model_policy=policy,
            announced=bool(announce), model_hash=row.model_hash, values=after,
            decision="rejected" if rejected else "approved", probability=probability,
            decided_at=now, first_position=first,
        )  # fmt: skip
        Profile.objects.filter(participant=p).update(
            values=after, decision="rejected" if rejected else "approved"
        )
        p.wave = number
        if not rejected:
            p.state = S.APPROVED
            p.completion_code = outcomes.end_code(study, S.APPROVED)
            p.finished_at = now
        else:
            p.state = S.DECISION
            p.generation = G.QUEUED
            p.generation_queued_at = now
            p.generation_started_at = None
            p.generation_finished_at = None
            p.generation_attempts = 0
            p.selection_seed = (int(p.selection_seed or 0) + 7919 * number) % (2**62)
            transaction.on_commit(partial(queue_generation, p.pk))
        p.save()
    return p
