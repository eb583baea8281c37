"""Fitting a study's pool models (EBR's densities, IBR's encoder) once, in the background.

A design naming a strategy with a pool fit (`ebr:k`, `ibr:k`; the engine's strategy table
says which) needs a model fitted on the study's pool. Fitting IBR takes tens of seconds, far
too long inside a participant's request, so it runs as a Celery task when the study goes
live (`fits_queue`), reports its progress on a `FittedMethod` row (the console shows it),
and stores the fit in the engine's versioned format. Workers read stored fits through
`stored_fits`. A participant who arrives before the fit is stored still gets recourses: the
strategy fits in-process on first use, with the same functions and seeds.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from recourse_engine.fit_store import dump_fit, fit_format
from recourse_engine.methods import MethodError
from recourse_engine.strategies import get_strategy, pool_fit_strategies
from studyapp.generation import engine
from studyapp.models import FittedMethod, Study

_PROGRESS_EVERY_S = 0.5
F = FittedMethod.State


def fit_params(strategy: str) -> dict[str, Any]:
    """Extra fitting parameters per strategy (setting STUDYAPP_BALANCED_FIT_PARAMS)."""
    return dict(getattr(settings, "STUDYAPP_BALANCED_FIT_PARAMS", {}).get(strategy, {}))


def balanced_strategies(study: Study) -> list[str]:
    """The strategies with a pool fit named by the study's design or any condition's design."""
    designs = [study.design, *(c.design for c in study.conditions.all() if c.design)]
    named = {part.strategy for text in designs for part in engine.design_of(text).parts}
    return sorted(named & set(pool_fit_strategies()))


def fits_queue(*, study: Study) -> list[FittedMethod]:
    """Queue a fit of each balanced strategy on the current pool in the engine's current fit
    format (idempotent: a fit that is queued, running or done is left alone; a failed one is
    queued again; one stored in an older format is ignored and fitted anew)."""
    from studyapp.generation.tasks import fit_balanced_methods

    rows = []
    for strategy in balanced_strategies(study):
        row, _ = FittedMethod.objects.get_or_create(
            study=study,
            strategy=strategy,
            pool_hash=study.pool_hash,
            fit_format=fit_format(strategy),
        )
        if row.state == F.FAILED:
            FittedMethod.objects.filter(pk=row.pk).update(
                state=F.QUEUED, progress=0.0, message="", updated_at=timezone.now()
            )
            row.refresh_from_db()
        rows.append(row)
    if any(r.state == F.QUEUED for r in rows):
        transaction.on_commit(lambda: fit_balanced_methods.delay(study.pk))
    return rows


def _progress_writer(row_id: int, start: float = 0.0, span: float = 1.0) -> Callable:
    """A callback `(done, total)` that stores start + span·done/total, at most every 0.5 s
    (and always at the end), so a fit of many epochs costs a handful of writes."""
    last = [0.0]

    def report(done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - last[0] < _PROGRESS_EVERY_S:
            return
        last[0] = now
        value = start + span * min(1.0, done / max(total, 1))
        FittedMethod.objects.filter(pk=row_id).update(progress=value, updated_at=timezone.now())

    return report


def fits_run(*, study_id: int) -> dict[str, str]:
    """Fit every queued balanced strategy of the study (the Celery task's body).

    A row is claimed by a conditional update, so two workers never fit the same one.
    Returns strategy -> final state.
    """
    study = Study.objects.get(pk=study_id)
    schema = engine.schema_of(study.schema)
    pool = engine.pool_of(study.pool_csv, schema, source=f"study {study.slug} pool")
    out: dict[str, str] = {}
    rows = FittedMethod.objects.filter(study=study, pool_hash=study.pool_hash)
    for row in rows.filter(strategy__in=pool_fit_strategies()):
        if row.fit_format != fit_format(row.strategy):
            continue  # an older format's row: kept for the record, never fitted again
        claimed = FittedMethod.objects.filter(pk=row.pk, state=F.QUEUED).update(
            state=F.RUNNING, progress=0.0, updated_at=timezone.now()
        )
        if not claimed:
            out[row.strategy] = FittedMethod.objects.get(pk=row.pk).state
            continue
        t0 = time.perf_counter()
        try:
            report = _progress_writer(row.pk)
            pool_fit = get_strategy(row.strategy).pool_fit
            fitted = pool_fit.fit(schema, pool, progress=report, **fit_params(row.strategy))  # type: ignore[union-attr]
            report(1, 1)
            blob = dump_fit(row.strategy, fitted)
        except (MethodError, ValueError) as exc:
            FittedMethod.objects.filter(pk=row.pk).update(
                state=F.FAILED, message=str(exc)[:500], updated_at=timezone.now()
            )
            out[row.strategy] = F.FAILED
            continue
        FittedMethod.objects.filter(pk=row.pk).update(
            state=F.DONE,
            progress=1.0,
            blob=blob,
            seconds=time.perf_counter() - t0,
            message=f"fitted on {len(pool)} pool rows",
            updated_at=timezone.now(),
        )
        out[row.strategy] = F.DONE
    return out
