"""Reading a study's stored fits for the worker: pool fits (EBR's densities, IBR's encoder)
and fitted recourse methods (the design's generating parts, rows `method:<name>`).

Kept apart from `method_fitting` (which queues and runs fits, and so talks to Celery) so
that the engine bridge can read fits without importing the code that writes them. A fit is
used only when it was stored for the study's current pool (and, for a method, its current
decision model) in the format this engine reads (`recourse_engine.fit_store`); any other is
left alone. A pool strategy without a usable fit fits in-process on first use; a method
without one waits for its fit (`generators_for` says why it is unavailable).
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from django.db.models import Q, QuerySet
from django.utils import timezone

from recourse_engine import Pool
from recourse_engine.fit_store import StaleFit, fit_format, method_fit_format
from recourse_engine.strategies import get_strategy, method_names, pool_fit_strategies
from studyapp.models import FittedMethod, Study

log = logging.getLogger(__name__)

METHOD_PREFIX = "method:"


def method_row(name: str) -> str:
    """The `FittedMethod.strategy` of a method's fit."""
    return f"{METHOD_PREFIX}{name}"


def model_key(study: Any) -> str:
    """Name plus a hash of the stored model file, so a new upload is picked up."""
    if study.decision_model == "uploaded" and (blob := study.decision_model_blob):
        return f"uploaded:{hashlib.sha256(bytes(blob)).hexdigest()[:16]}"
    return str(study.decision_model)


def current_formats() -> dict[str, str]:
    """Row strategy -> the fit format this engine writes and reads."""
    out = {name: fit_format(name) for name in pool_fit_strategies()}
    out.update({method_row(name): method_fit_format(name) for name in method_names()})
    return out


def current_rows(study: Study) -> QuerySet[FittedMethod]:
    """Fits (in any state) of the study's current pool (and, for methods, its current decision
    model), in the formats this engine reads."""
    formats = Q()
    for strategy, fmt in current_formats().items():
        model = model_key(study) if strategy.startswith(METHOD_PREFIX) else ""
        formats |= Q(strategy=strategy, fit_format=fmt, model_key=model)
    return FittedMethod.objects.filter(formats, study=study, pool_hash=study.pool_hash).order_by(
        "strategy"
    )


def usable_rows(study: Study) -> QuerySet[FittedMethod]:
    """Finished fits of the study's current pool, in the formats this engine reads."""
    return current_rows(study).filter(state=FittedMethod.State.DONE)


def fits_version(study: Study) -> tuple[str, ...]:
    """`strategy:format#row` of every usable stored fit: part of the worker's cache keys, so
    what was built before a fit was stored (or refitted) is rebuilt once it is."""
    rows = usable_rows(study).values_list("strategy", "fit_format", "pk")
    return tuple(f"{s}:{f}#{pk}" for s, f, pk in rows)


def fit_version(fmt: str, blob: bytes) -> str:
    """What a generated recourse records of the fit that made it: format and content hash."""
    return f"{fmt}#{hashlib.sha256(blob).hexdigest()[:12]}"


def mark_stale(study: Study, pk: int, exc: Exception) -> None:
    """A stored blob that no longer loads: failed, so the next queueing fits it again."""
    log.warning("study %s: %s; it must be fitted again", study.slug, exc)
    FittedMethod.objects.filter(pk=pk).update(
        state=FittedMethod.State.FAILED, message=str(exc)[:500], updated_at=timezone.now()
    )


def attach_fitted(study: Study, pool: Pool) -> list[str]:
    """Attach the study's usable stored pool fits to `pool` (a pool parsed from the study's
    CSV); a blob that no longer loads is marked failed."""
    from recourse_engine.fit_store import load_fit

    attached = []
    rows = usable_rows(study).filter(strategy__in=pool_fit_strategies())
    for pk, strategy, blob in rows.values_list("pk", "strategy", "blob"):
        if blob is None:
            continue
        try:
            fitted = load_fit(strategy, blob)
        except StaleFit as exc:
            mark_stale(study, pk, exc)
            continue
        get_strategy(strategy).pool_fit.attach(pool, fitted)  # type: ignore[union-attr]
        attached.append(strategy)
    return attached
