"""The worker's prepared objects of a study: one `PoolIndex` per study and each generating
method's stored fit, loaded once.

Cached per (study, pool, decision model, usable stored fits) because parsing and sorting a
3,683-row pool costs far more than one participant's search; a new pool, model or fit is
picked up by its key. Nothing here searches or selects; that is the engine's job.
"""

from __future__ import annotations

import threading
from typing import Any

from recourse_engine import Design, FeatureSchema, PoolIndex
from recourse_engine.fit_store import StaleFit, load_method
from recourse_engine.generated import Generator, method_settings
from recourse_engine.methods.base import MethodError
from studyapp.definition.engine_objects import StudyConfigError, pool_of, schema_of, study_model
from studyapp.generation import stored_fits
from studyapp.models import FittedMethod

_lock = threading.Lock()
_index_cache: dict[tuple[Any, ...], PoolIndex] = {}
_method_cache: dict[tuple[Any, ...], dict[str, Generator]] = {}


def _cache_key(study: Any) -> tuple[Any, ...]:
    """What a worker's cached pool index and loaded methods depend on: the study, its pool,
    its decision model and its usable stored fits."""
    return (
        study.pk,
        study.pool_hash,
        stored_fits.model_key(study),
        stored_fits.fits_version(study),
    )


def pool_index_for(study: Any) -> tuple[FeatureSchema, PoolIndex]:
    """The study's schema and prepared pool index, cached per (study, pool, model, stored
    balanced-recourse fits): an index built before a fit was stored is rebuilt with it."""
    schema = schema_of(study.schema)
    key = _cache_key(study)
    with _lock:
        index = _index_cache.get(key)
        if index is None:
            pool = pool_of(study.pool_csv, schema, source=f"study {study.slug} pool")
            stored_fits.attach_fitted(study, pool)
            index = PoolIndex(schema, pool, study_model(study, schema))
            for stale in [k for k in _index_cache if k[0] == study.pk]:
                del _index_cache[stale]
            _index_cache[key] = index
    return schema, index


def pool_index_with_model(study: Any, model: Any, model_hash: str) -> PoolIndex:
    """The study's pool prepared for another decision model (a multi-wave study's model in
    force for a wave: `generation.wave_model_store`), so that the plans of that wave are
    the ones that model approves; cached beside the study's own index, per model hash."""
    schema, base = pool_index_for(study)
    key = (*_cache_key(study), "model", model_hash)
    with _lock:
        index = _index_cache.get(key)
        if index is None:
            index = PoolIndex(schema, base.pool, model)
            _index_cache[key] = index
    return index


def generators_for(
    study: Any, design: Design, schema: FeatureSchema
) -> tuple[dict[str, Generator], list[str]]:
    """The study's fitted method for each generating part of `design`, by method name, and
    the names whose fit is still queued or running. A usable fit is loaded once per worker
    (cached like the pool index); a method without one is returned unavailable, with why."""
    names = design.methods
    if not names:
        return {}, []
    key = _cache_key(study)
    with _lock:
        cached = _method_cache.get(key)
        if cached is None:
            for stale in [k for k in _method_cache if k[0] == study.pk]:
                del _method_cache[stale]
            cached = _method_cache[key] = {}
    out: dict[str, Generator] = {}
    pending: list[str] = []
    for name in names:
        gen = cached.get(name)
        if gen is None:
            gen, state = _generator(study, name, schema)
            if gen.method is not None:
                with _lock:
                    cached[name] = gen
            elif state in (FittedMethod.State.QUEUED, FittedMethod.State.RUNNING):
                pending.append(name)
        out[name] = gen
    return out, pending


def _generator(study: Any, name: str, schema: FeatureSchema) -> tuple[Generator, str]:
    """The method loaded from its stored fit, or unavailable with the reason (and the fit
    row's state, "" when there is none)."""
    try:
        settings = method_settings(name, (study.method_params or {}).get(name), schema)
    except MethodError as exc:
        raise StudyConfigError(str(exc)) from None
    row = (
        stored_fits.current_rows(study)
        .filter(strategy=stored_fits.method_row(name))
        .values_list("pk", "state", "message", "fit_format", "blob")
        .first()
    )
    if row is None:
        return Generator(settings, unavailable="the method was never fitted on this pool"), ""
    pk, state, message, fmt, blob = row
    if state != FittedMethod.State.DONE or blob is None:
        why = {
            FittedMethod.State.QUEUED: "the method's fit is still queued",
            FittedMethod.State.RUNNING: "the method's fit is still running",
        }.get(state, f"the method's fit failed ({message})")
        return Generator(settings, unavailable=why), state
    try:
        method = load_method(name, blob, schema)
    except StaleFit as exc:
        stored_fits.mark_stale(study, pk, exc)
        return Generator(settings, unavailable=f"the stored fit is unusable ({exc})"), ""
    version = stored_fits.fit_version(fmt, bytes(blob))
    return Generator(settings, method=method, fit_version=version), state


def clear_cache() -> None:
    with _lock:
        _index_cache.clear()
        _method_cache.clear()
