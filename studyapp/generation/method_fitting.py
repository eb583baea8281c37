"""Fitting a study's pool models and recourse methods once, in the background.

A design naming a strategy with a pool fit (`ebr:k`, `ibr:k`; the engine's strategy table
says which) needs a model fitted on the study's pool; a design naming a recourse method
(`wachter:1`, `ebr_generated:1`) needs that method fitted on the pool against the study's
decision model. Fitting a VAE takes tens of seconds, far too long inside a participant's
request, so it runs as a Celery task when the study goes live (`fits_queue`), reports its
progress on a `FittedMethod` row (the console shows it), and stores the fit in the engine's
versioned format. Workers read stored fits through `stored_fits`. A participant who arrives
before a pool fit is stored still gets recourses (the strategy fits in-process on first
use, with the same functions and seeds); one who arrives before a method's fit waits for
it (`generation.services`).

`methods_check` is what going live asks first: whether every method the designs name can
work with this study's stored decision model and pool, so that a study that cannot serve
its design never opens.

A draft's fits may be asked for before going live (`fits_for_draft`: the console's "Fit
methods now", the API, the design check), so that a pilot shows what participants will
see; they are the same rows, keyed by pool, model and format, so going live reuses them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from recourse_engine import Design
from recourse_engine.fit_store import dump_fit, dump_method, fit_format, method_fit_format
from recourse_engine.generated import fit_on_pool, method_problem, method_settings, pool_data
from recourse_engine.methods import MethodError
from recourse_engine.strategies import get_strategy, pool_fit_strategies
from studyapp.definition import engine_objects
from studyapp.definition.errors import StudyError
from studyapp.generation import stored_fits
from studyapp.models import FittedMethod, Study

log = logging.getLogger(__name__)

_PROGRESS_EVERY_S = 0.5
F = FittedMethod.State


def fit_params(strategy: str) -> dict[str, Any]:
    """Extra fitting parameters per strategy (setting STUDYAPP_BALANCED_FIT_PARAMS)."""
    return dict(getattr(settings, "STUDYAPP_BALANCED_FIT_PARAMS", {}).get(strategy, {}))


def study_designs(study: Study) -> list[Design]:
    """The study's design and every condition's own design."""
    texts = [study.design, *(c.design for c in study.conditions.all() if c.design)]
    return [engine_objects.design_of(text) for text in texts]


def balanced_strategies(study: Study) -> list[str]:
    """The strategies with a pool fit named by the study's design or any condition's design."""
    named = {part.strategy for design in study_designs(study) for part in design.parts}
    return sorted(named & set(pool_fit_strategies()))


def generating_methods(study: Study) -> list[str]:
    """The recourse methods the study's designs generate with, sorted."""
    return sorted({name for design in study_designs(study) for name in design.methods})


def methods_check(study: Study) -> list[str]:
    """Why the study's designs cannot run with its decision model and pool (empty: they
    can), one line per method naming it."""
    names = generating_methods(study)
    if not names:
        return []
    try:
        schema = engine_objects.schema_of(study.schema)
        model = engine_objects.study_model(study, schema)
        pool = engine_objects.pool_of(study.pool_csv, schema, source=f"study {study.slug} pool")
    except (engine_objects.StudyConfigError, ValueError) as exc:
        return [f"the study's schema, pool or decision model cannot be used: {exc}"]
    problems = []
    for name in names:
        try:
            settings = method_settings(name, (study.method_params or {}).get(name), schema)
            problem = method_problem(name, model)
            if problem:
                raise MethodError(problem)
            pool_data(settings, schema, pool, model)  # a group the method needs exists
        except MethodError as exc:
            problems.append(str(exc) if str(exc).startswith(name) else f"{name}: {exc}")
    return problems


def fits_for_draft(*, study: Study) -> list[FittedMethod]:
    """Queue the study's fits now, before it goes live (going live then finds them stored
    and fits nothing again); refused, with every problem named, when the designs' methods
    cannot work with the study's decision model and pool."""
    problems = methods_check(study)
    if problems:
        raise StudyError(f"study {study.slug}: cannot fit its methods: " + "; ".join(problems))
    return fits_queue(study=study)


def fits_queue(*, study: Study) -> list[FittedMethod]:
    """Queue a fit of each balanced strategy and generating method on the current pool (and,
    for methods, decision model) in the engine's current fit format (idempotent: a fit that
    is queued, running or done is left alone; a failed one is queued again; one stored in an
    older format is ignored and fitted anew)."""
    from studyapp.generation.tasks import fit_balanced_methods

    wanted = [(s, fit_format(s), "") for s in balanced_strategies(study)]
    model = stored_fits.model_key(study)
    wanted += [
        (stored_fits.method_row(name), method_fit_format(name), model)
        for name in generating_methods(study)
    ]
    rows = []
    for strategy, fmt, model_key in wanted:
        row, _ = FittedMethod.objects.get_or_create(
            study=study,
            strategy=strategy,
            pool_hash=study.pool_hash,
            fit_format=fmt,
            model_key=model_key,
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


def progress_writer(rows: QuerySet, places: int | None = None) -> Callable[[int, int], None]:
    """A callback `(done, total)` that stores done/total as the `progress` of `rows` (a fit's
    or a design check's), at most every 0.5 s (and always at the end), so a run of many
    epochs costs a handful of writes; `places`: rounded to so many decimals."""
    last = [0.0]

    def report(done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - last[0] < _PROGRESS_EVERY_S:
            return
        last[0] = now
        value = min(1.0, done / max(total, 1))
        if places is not None:
            value = round(value, places)
        rows.update(progress=value, updated_at=timezone.now())

    return report


def fits_run(*, study_id: int) -> dict[str, str]:
    """Fit every queued pool strategy and method of the study (the Celery task's body).

    A row is claimed by a conditional update, so two workers never fit the same one.
    Returns row strategy -> final state. The numeric libraries run on the worker's thread
    count (`celery_app.worker_threads`, default 1), in the worker and in the command that
    fits before it returns: threads beyond a shared host's free cores spin at their barriers
    and slow a fit many times over.
    """
    from analysis.experiment.threads import thread_limit
    from studyapp.config.celery_app import worker_threads

    with thread_limit(worker_threads()):
        return _fits_run(study_id)


def _fits_run(study_id: int) -> dict[str, str]:
    study = Study.objects.get(pk=study_id)
    schema = engine_objects.schema_of(study.schema)
    pool = engine_objects.pool_of(study.pool_csv, schema, source=f"study {study.slug} pool")
    formats = stored_fits.current_formats()
    model = stored_fits.model_key(study)
    out: dict[str, str] = {}
    for row in FittedMethod.objects.filter(study=study, pool_hash=study.pool_hash):
        is_method = row.strategy.startswith(stored_fits.METHOD_PREFIX)
        if row.fit_format != formats.get(row.strategy) or (is_method and row.model_key != model):
            continue  # another format's or model's row: kept for the record, never refitted
        claimed = FittedMethod.objects.filter(pk=row.pk, state=F.QUEUED).update(
            state=F.RUNNING, progress=0.0, updated_at=timezone.now()
        )
        if not claimed:
            out[row.strategy] = FittedMethod.objects.get(pk=row.pk).state
            continue
        t0 = time.perf_counter()
        report = progress_writer(FittedMethod.objects.filter(pk=row.pk))
        try:
            if is_method:
                blob = _fit_method(
                    study, row.strategy[len(stored_fits.METHOD_PREFIX) :], schema, pool, report
                )
            else:
                pool_fit = get_strategy(row.strategy).pool_fit
                fitted = pool_fit.fit(schema, pool, progress=report, **fit_params(row.strategy))  # type: ignore[union-attr]
                report(1, 1)
                blob = dump_fit(row.strategy, fitted)
        except Exception as exc:  # noqa: BLE001 - any failure is recorded on the row, not lost
            if not isinstance(exc, MethodError | ValueError | engine_objects.StudyConfigError):
                log.exception("study %s: fitting %s failed", study.slug, row.strategy)
            FittedMethod.objects.filter(pk=row.pk).update(
                state=F.FAILED,
                message=str(exc)[:500] or type(exc).__name__,
                updated_at=timezone.now(),
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


def _fit_method(study: Study, name: str, schema: Any, pool: Any, report: Callable) -> bytes:
    """A method fitted on the pool against the study's decision model, as a stored blob."""
    settings = method_settings(name, (study.method_params or {}).get(name), schema)
    model = engine_objects.study_model(study, schema)
    return dump_method(fit_on_pool(settings, schema, pool, model, progress=report))
