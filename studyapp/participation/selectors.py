"""Reads: what pages, the admin, exports and bots need to know, without side effects."""

from __future__ import annotations

from functools import cache
from typing import Any

from django.db.models import Count, Exists, F, OuterRef, QuerySet

from studyapp.models import Evaluation, Participant, Recourse, Study
from studyapp.participation.study_cache import study_at
from studyapp.wave_models import plan_offset

S = Participant.State
G = Participant.Generation


def study_get_live(*, slug: str) -> Study | None:
    """The live study with this link, from the per-process cache when it is current."""
    rows = Study.objects.filter(slug=slug, state=Study.State.LIVE).values_list("pk", "updated_at")
    try:  # the slug is unique: get(), no ORDER BY
        return study_at(*rows.get())
    except Study.DoesNotExist:
        return None


@cache
def _participant_query() -> QuerySet[Participant]:
    """What `participant_get` filters, built once per process: a participant request then
    only adds its code. Never evaluated itself (it would keep its rows); each request's
    `get` works on a copy, as a view's class-level queryset does."""
    return Participant.objects.select_related("profile").annotate(
        study_version=F("study__updated_at")
    )


@cache
def _plans_query() -> QuerySet[Recourse]:
    """What `participant_plans` filters, built once per process: resolving the `done`
    subquery against the plans costs more than the rest of the query's Python."""
    done = Exists(Evaluation.objects.filter(recourse_id=OuterRef("pk")))
    return Recourse.objects.annotate(done=done).order_by("position")


def participant_get(*, code: str) -> Participant | None:
    """The participant with their profile, and their study (without its large columns) as
    of its version read in the same query: every participant page reads the study, the
    plan pages the profile."""
    if not code or len(code) > 40:
        return None
    try:  # get(), not first(): the code is unique, and no ORDER BY to build
        p = _participant_query().get(code=code)
    except Participant.DoesNotExist:
        return None
    p.study = study_at(p.study_id, p.study_version)
    return p


#: what the waiting page's status poll reads (`waiting.waiting_check`)
STATUS_FIELDS = ("code", "state", "generation", "generation_queued_at", "study__waiting_timeout_s")


def participant_get_status(*, code: str) -> Participant | None:
    """The participant as the status poll needs them: a few columns, no profile, the study's
    waiting time-out only. The waiting page polls every few seconds, so this is the most
    frequent participant request."""
    if not code or len(code) > 40:
        return None
    try:
        return Participant.objects.select_related("study").only(*STATUS_FIELDS).get(code=code)
    except Participant.DoesNotExist:
        return None


def participant_plans(*, participant: Participant) -> list[Recourse]:
    """The participant's plans in order, each with `done` (evaluated or not), in one query:
    the plan page needs the current one and how many there are."""
    offset = plan_offset(participant.pk, participant.wave)  # a multi-wave study's wave
    return list(_plans_query().filter(participant_id=participant.pk, position__gt=offset))


def participant_current_recourse(*, participant: Participant) -> Recourse | None:
    return (
        Recourse.objects.filter(participant=participant, evaluation__isnull=True)
        .order_by("position")
        .first()
    )


def participant_page_key(*, participant: Participant) -> str:
    """The page the participant is on: its state, with the plan number while evaluating."""
    if participant.state == S.EVALUATING:
        current = participant_current_recourse(participant=participant)
        if current is not None:
            return f"evaluation-{current.position}"
    return participant.state


def participant_progress(*, participant: Participant) -> dict[str, Any]:
    """Status of recourse generation for the waiting page's progress indicator."""
    steps = ["queued", "running", "done"]
    gen = participant.generation
    if participant.state == S.DECISION:  # ready: its Continue leads on (plans or none)
        ready = gen in (G.DONE, G.EMPTY, G.FAILED)
    else:
        ready = participant.state != S.WAITING
    step = 3 if ready else (steps.index(gen) + 1 if gen in steps else 1)
    return {
        "state": participant.state,
        "generation": gen,
        "ready": ready,
        "step": step,
        "steps": len(steps),
    }


def study_participants(*, study: Study) -> QuerySet[Participant]:
    return (
        Participant.objects.filter(study=study)
        .select_related("profile")
        .annotate(n_evaluations=Count("evaluations"))
        .order_by("pk")
    )


def study_evaluations(*, study: Study) -> QuerySet[Evaluation]:
    return (
        Evaluation.objects.filter(participant__study=study)
        .select_related("recourse", "participant", "participant__profile")
        .order_by("participant_id", "recourse__position")
    )
