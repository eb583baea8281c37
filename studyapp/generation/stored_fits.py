"""Reading a study's stored pool fits (EBR's densities, IBR's encoder) for the worker.

Kept apart from `method_fitting` (which queues and runs fits, and so talks to Celery) so
that the engine bridge can read fits without importing the code that writes them. A fit is
used only when it was stored for the study's current pool in the format this engine reads
(`recourse_engine.fit_store`); any other is left alone and the strategy fits in-process on
first use, with the same functions and seeds, until a fresh fit is stored.
"""

from __future__ import annotations

import logging

from django.db.models import Q, QuerySet
from django.utils import timezone

from recourse_engine import Pool
from recourse_engine.fit_store import StaleFit, fit_format, load_fit
from recourse_engine.strategies import get_strategy, pool_fit_strategies
from studyapp.models import FittedMethod, Study

log = logging.getLogger(__name__)


def current_formats() -> dict[str, str]:
    """Strategy -> the fit format this engine writes and reads."""
    return {name: fit_format(name) for name in pool_fit_strategies()}


def current_rows(study: Study) -> QuerySet[FittedMethod]:
    """Fits (in any state) of the study's current pool, in the formats this engine reads."""
    formats = Q()
    for strategy, fmt in current_formats().items():
        formats |= Q(strategy=strategy, fit_format=fmt)
    if not formats:
        return FittedMethod.objects.none()
    return FittedMethod.objects.filter(formats, study=study, pool_hash=study.pool_hash).order_by(
        "strategy"
    )


def usable_rows(study: Study) -> QuerySet[FittedMethod]:
    """Finished fits of the study's current pool, in the formats this engine reads."""
    return current_rows(study).filter(state=FittedMethod.State.DONE)


def fits_version(study: Study) -> tuple[str, ...]:
    """`strategy:format` of every usable stored fit: part of the worker's pool-index cache
    key, so an index built before a fit was stored is rebuilt once it is."""
    return tuple(f"{s}:{f}" for s, f in usable_rows(study).values_list("strategy", "fit_format"))


def attach_fitted(study: Study, pool: Pool) -> list[str]:
    """Attach the study's usable stored fits to `pool` (a pool parsed from the study's CSV);
    a blob that no longer loads is marked failed, so the next queueing fits it again."""
    attached = []
    for pk, strategy, blob in usable_rows(study).values_list("pk", "strategy", "blob"):
        if blob is None:
            continue
        try:
            fitted = load_fit(strategy, blob)
        except StaleFit as exc:
            log.warning("study %s: %s; fitting in-process until it is refitted", study.slug, exc)
            FittedMethod.objects.filter(pk=pk).update(
                state=FittedMethod.State.FAILED, message=str(exc)[:500], updated_at=timezone.now()
            )
            continue
        get_strategy(strategy).pool_fit.attach(pool, fitted)  # type: ignore[union-attr]
        attached.append(strategy)
    return attached
