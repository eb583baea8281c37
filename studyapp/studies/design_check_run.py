"""Running a study's design check (the Celery task's body, and the `check_design` command's).

The prediction must be honest, so it runs on the objects a participant's recourse task
uses: the worker's pool index and fitted methods (`generation.worker_cache`), each
condition's design as `generation.services` reads it (its own, else the study's,
`design_check.designs_of`), the study's fallback, and `PoolIndex.select` (inside
`recourse_engine.design_check.check_design`). Methods without a stored fit are fitted
first with the go-live fit task's body (`method_fitting`, rows keyed by pool and model, so
going live reuses them).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from django.conf import settings
from django.utils import timezone

from recourse_engine.design_check import check_design, sample_rows
from studyapp.definition import engine_objects
from studyapp.definition.errors import StudyError
from studyapp.generation import method_fitting, stored_fits, worker_cache
from studyapp.models import DesignCheck, FittedMethod, Study
from studyapp.studies.design_check import design_key, designs_of

log = logging.getLogger(__name__)

C = DesignCheck.State
#: seconds between two looks at a method's fit that another worker is running
_FIT_POLL_S = 2.0


def _fits_ready(study: Study) -> list[str]:
    """Fit what the designs need and is not stored yet (the go-live task's body, here and
    now); wait for fits another worker is running. Returns the methods still unfitted."""
    method_fitting.fits_queue(study=study)
    method_fitting.fits_run(study_id=study.pk)
    deadline = time.monotonic() + float(getattr(settings, "STUDYAPP_FIT_WAIT_S", 600))
    busy = (FittedMethod.State.QUEUED, FittedMethod.State.RUNNING)
    while True:
        waiting = list(
            stored_fits.current_rows(study)
            .filter(state__in=busy)
            .values_list("strategy", flat=True)
        )
        if not waiting or time.monotonic() > deadline:
            return waiting
        time.sleep(_FIT_POLL_S)


def _sample(study: Study, check: DesignCheck, index: Any, schema: Any) -> tuple[Any, Any]:
    """The check's profiles: rows of the study's pool, or of a pool-collection study's
    completed answers (as `pool_collection.collected_pool` makes a pool of them)."""
    if check.sample_source == "pool":
        pool = index.pool
    else:
        from studyapp.studies.pool_collection import collected_pool

        source = Study.objects.get(slug=check.sample_source)
        collected = collected_pool(source, list(schema.keys))
        if not collected.counts.get("included"):
            raise StudyError(f"{source.slug}: no completed answers to draw from")
        pool = engine_objects.pool_of(
            collected.csv_bytes.decode("utf-8"), schema, source=f"study {source.slug} answers"
        )
    if len(pool) == 0:
        raise StudyError(f"{check.sample_source}: no profiles to draw from")
    rows = sample_rows(len(pool), check.sample_size, check.seed)
    income = None if pool.income is None else np.asarray(pool.income)[rows]
    return pool.codes[rows], income


def check_run(*, check_id: int, progress: Callable[[int, int], None] | None = None) -> str:
    """Run a queued check (the Celery task's body, and the command's); returns its final
    state. Claimed by a conditional update, so two workers never run one check."""
    claimed = DesignCheck.objects.filter(pk=check_id, state=C.QUEUED).update(
        state=C.RUNNING,
        progress=0.0,
        message="fitting the design's methods",
        updated_at=timezone.now(),
    )
    if not claimed:
        return DesignCheck.objects.filter(pk=check_id).values_list("state", flat=True).first() or ""
    from analysis.experiment.threads import thread_limit
    from studyapp.config.celery_app import worker_threads

    t0 = time.perf_counter()
    try:
        with thread_limit(worker_threads()):
            result, key = _compute(check_id, progress)
    except Exception as exc:  # noqa: BLE001 - any failure is recorded on the row, not lost
        if not isinstance(exc, StudyError | ValueError):
            log.exception("design check %s failed", check_id)
        DesignCheck.objects.filter(pk=check_id).update(
            state=C.FAILED,
            message=(str(exc) or type(exc).__name__)[:500],
            updated_at=timezone.now(),
        )
        return C.FAILED
    DesignCheck.objects.filter(pk=check_id).update(
        state=C.DONE,
        progress=1.0,
        result=result,
        design_key=key,
        seconds=round(time.perf_counter() - t0, 3),
        message=f"{result['sample']['drawn']} profiles drawn, {result['sample']['rejected']} rejected",
        updated_at=timezone.now(),
    )
    return C.DONE


def _compute(check_id: int, progress: Callable[[int, int], None] | None) -> tuple[dict, str]:
    check = DesignCheck.objects.select_related("study").get(pk=check_id)
    study = check.study
    unfitted = _fits_ready(study)
    if unfitted:
        log.warning("design check %s: fits still running: %s", check_id, ", ".join(unfitted))
    DesignCheck.objects.filter(pk=check_id).update(message="drawing and selecting")
    schema, index = worker_cache.pool_index_for(study)
    designs = designs_of(study)
    generators = {}
    for name, text in designs.items():
        generators[name], _ = worker_cache.generators_for(
            study, engine_objects.design_of(text), schema
        )
    codes, income = _sample(study, check, index, schema)
    writer = method_fitting.progress_writer(DesignCheck.objects.filter(pk=check_id), places=4)

    def report(done: int, total: int) -> None:
        writer(done, total)
        if progress is not None:
            progress(done, total)

    result = check_design(
        index,
        codes,
        income,
        designs,
        generators,
        fallback=study.method_fallback,
        seed=int(check.seed),
        source=check.sample_source,
        progress=report,
    )
    result["designs"] = designs
    return result, design_key(study)
