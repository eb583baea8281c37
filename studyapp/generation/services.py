"""Recourse generation for one participant (the Celery task's body): select, store, or
give up politely. Idempotent, so a re-delivered task changes nothing.

A design part that generates with a recourse method needs the method's stored fit. While
that fit is still queued or running (a participant who arrives just after the study went
live), `FitPending` asks the task to try again shortly; after `STUDYAPP_FIT_WAIT_S` seconds
the study's fallback applies instead, recorded on the recourse.
"""

from __future__ import annotations

import logging
import random
import time

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from recourse_engine import DesignError, ModelError, PoolError, SchemaError
from recourse_engine.methods import MethodError
from studyapp.definition import engine_objects, outcomes
from studyapp.generation import wave_model_store, worker_cache
from studyapp.models import Condition, Participant, Profile, Recourse
from studyapp.wave_models import plan_offset

log = logging.getLogger(__name__)

S = Participant.State
G = Participant.Generation
#: states in which a participant's plans are generated: the decision page (they stay there
#: until they continue) and the waiting page (the worker moves them on)
GENERATING = (S.DECISION, S.WAITING)


class FitPending(Exception):
    """A method this participant's design needs is still being fitted: try again soon."""


def fit_wait_s() -> float:
    """How long a participant's generation waits for a method's fit before falling back."""
    return float(getattr(settings, "STUDYAPP_FIT_WAIT_S", 600))


def _generation_of(participant_id: int) -> str:
    """The stored generation status; "" when the participant was deleted on request."""
    found = Participant.objects.filter(pk=participant_id).values_list("generation", flat=True)
    return found.first() or ""


def _lock(participant_id: int) -> Participant | None:
    """The participant's row, locked until the transaction ends (None: deleted on request).
    The study's pool and model file are read later, outside the transaction (which holds
    the database's writer lock on SQLite), and only when the worker has not built the
    study's index yet."""
    return (
        Participant.objects.select_for_update(of=("self",))
        .select_related("study")
        .defer("study__pool_csv", "study__decision_model_blob")
        .filter(pk=participant_id)
        .first()
    )


def _mark_running(participant_id: int) -> Participant | None:
    with transaction.atomic():
        p = _lock(participant_id)
        if p is None or p.state not in GENERATING or p.generation in (G.DONE, G.EMPTY, G.FAILED):
            return None  # already generated (re-delivered task) or not asked for
        p.generation = G.RUNNING
        p.generation_started_at = p.generation_started_at or timezone.now()
        p.generation_attempts += 1
        p.save(update_fields=["generation", "generation_started_at", "generation_attempts"])
        return p


def design_for(p: Participant) -> str:
    """The participant's condition's design when it has one, else the study's."""
    if p.condition:
        own = (
            Condition.objects.filter(study_id=p.study_id, name=p.condition)
            .values_list("design", flat=True)
            .first()
        )
        if own and own.strip():
            return own
    return p.study.design


def recourses_generate(*, participant_id: int, may_wait: bool = True) -> str:
    """Select and store a participant's recourses; idempotent (returns the final status).

    Raises FitPending when a method's fit is not ready yet and `may_wait` (the task then
    retries); without `may_wait`, or after the wait, the fallback applies."""
    p = _mark_running(participant_id)
    if p is None:
        return _generation_of(participant_id)
    t0 = time.perf_counter()
    try:
        schema, index = worker_cache.pool_index_for(p.study)
        if p.wave > 1 and wave_model_store.is_multi_wave(p.study):
            # a later wave's plans: the ones the model in force for it approves (retrained
            # or another seed's), not the study's first model
            model, row = wave_model_store.model_in_force(p.study, p.condition, p.wave)
            if row.policy != "frozen":
                index = worker_cache.pool_index_with_model(p.study, model, row.model_hash)
        values = (
            Profile.objects.values_list("values", flat=True).filter(participant_id=p.pk).first()
        )
        if values is None:  # withdrew while the task ran: nothing left to work on
            return _generation_of(participant_id)
        design = engine_objects.design_of(design_for(p))
        generators, pending = worker_cache.generators_for(p.study, design, schema)
        if pending and may_wait:
            waited = (timezone.now() - p.generation_started_at).total_seconds()
            if waited < fit_wait_s():
                # a sign of life for the sweeper: this task is alive and will look again
                Participant.objects.filter(pk=p.pk).update(generation_queued_at=timezone.now())
                raise FitPending(", ".join(pending))
        # a multi-wave study's robust plans: approved by every model they may meet
        robust_models = wave_model_store.robust_set_or_none(p.study, p.condition, p.wave, design)
        selection = index.select(
            values,
            p.income_jpy,
            design,
            seed=p.selection_seed,
            generators=generators,
            fallback=p.study.method_fallback,
            robust_models=robust_models,
        )
    except (
        PoolError,
        DesignError,
        ModelError,
        SchemaError,
        MethodError,
        engine_objects.StudyConfigError,
    ) as exc:
        return recourses_fail(participant_id=participant_id, error=f"study configuration: {exc}")
    seconds = time.perf_counter() - t0
    order = list(range(len(selection.picks)))
    random.Random(p.selection_seed).shuffle(order)
    offset = plan_offset(p.pk, p.wave)  # a multi-wave study's later wave: after the last's
    rows = [
        Recourse(
            participant_id=p.pk,
            position=offset + order[i] + 1,
            strategy=pick.strategy,
            method=pick.method or "pool_search",
            pool_index=int(pick.pool_index) if pick.pool_index >= 0 else None,
            pool_id=str(pick.pool_id),
            values={
                k: (float(v) if schema.items[j].is_numeric else int(v))
                for j, (k, v) in enumerate(zip(schema.keys, pick.codes, strict=True))
            },
            changed=list(pick.changed),
            sparsity=int(pick.sparsity),
            proximity=float(pick.proximity),
            origin=pick.origin,
            sparsity_rank=int(pick.sparsity_rank),
            proximity_rank=int(pick.proximity_rank),
            method_params=pick.method_params,
            fit_version=pick.fit_version,
            fallback=pick.fallback[:300],
            generation_seconds=seconds,
        )
        for i, pick in enumerate(selection.picks)
    ]
    with transaction.atomic():
        locked = Participant.objects.select_for_update().filter(pk=participant_id).first()
        if locked is None:
            return ""
        if (
            locked.state not in GENERATING
            or locked.recourses.filter(position__gt=offset).exists()
            or locked.generation in (G.DONE, G.EMPTY)
        ):
            return locked.generation
        Recourse.objects.bulk_create(rows)
        if rows:
            locked.generation_finished_at = timezone.now()
            locked.generation = G.DONE
            if locked.state == S.WAITING:  # on the decision page they continue themselves
                locked.state = S.EVALUATING
            reasons = []
            if selection.shortfall:
                reasons.append(
                    f"only {len(rows)} of {selection.requested} recourses found "
                    f"({selection.n_admissible} admissible in the pool)"
                )
            reasons += [f"{label}: {why}" for label, why in selection.fallbacks.items()]
            if reasons:
                locked.flagged = True
                locked.flag_reason = "; ".join([r for r in [locked.flag_reason] if r] + reasons)[
                    :300
                ]
        else:
            why = "; ".join(f"{label}: {w}" for label, w in selection.fallbacks.items())
            _end_without_recourse(
                locked,
                G.EMPTY,
                f"no recourse to show ({why})"[:300]
                if why
                else "no admissible recourse in the pool",
            )
        locked.save()
        return locked.generation


def _end_without_recourse(p: Participant, generation: str, reason: str) -> None:
    """No plans to show: the (locked) participant is credited as completed, since they took
    part (the completed outcome's code), and flagged for the researcher. One still on the
    decision page reads it first: their Continue ends it (`participation.services`)."""
    p.generation = generation
    p.generation_finished_at = timezone.now()
    p.flagged = True
    p.flag_reason = reason
    if p.state == S.DECISION:
        return
    p.state = S.NO_RECOURSE
    p.completion_code = outcomes.outcome_code(p.study, "completed")
    p.finished_at = timezone.now()


def recourses_fail(*, participant_id: int, error: str) -> str:
    """Give up on generation: the participant is told politely, the case is flagged."""
    log.error("recourse generation failed for participant %s: %s", participant_id, error)
    with transaction.atomic():
        p = _lock(participant_id)
        if p is None:
            return ""
        if p.generation in (G.DONE, G.EMPTY) or p.state not in GENERATING:
            return p.generation
        p.generation_error = error[:2000]
        _end_without_recourse(p, G.FAILED, "recourse generation failed (see generation error)")
        p.save()
        return p.generation
