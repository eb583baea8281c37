"""Balanced-recourse fits of a study: queued, fitted with progress, stored, and reused.

The reference for "reused" is the engine's own lazy path: a pool without a stored fit
fits in-process with the same functions and seeds, so both must give the same scores and
the same recourses.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from django.test import override_settings

from recourse_engine import carloan_schema, synth_pool
from recourse_engine.fit_store import dump_fit, fit_format, load_fit
from recourse_engine.methods import fit_pool_density
from recourse_engine.strategies import get_strategy
from studyapp.definition import engine_objects
from studyapp.generation import method_fitting, stored_fits, worker_cache
from studyapp.models import Condition, FittedMethod, Study
from studyapp.studies import carloan, services

pytestmark = pytest.mark.django_db(transaction=True)
SCHEMA = carloan_schema()
SMALL_IBR = {"ibr": {"epochs": 4}}


def _study(design: str, pool=None) -> Study:
    return services.study_create(
        slug="balanced",
        title="balanced",
        schema=SCHEMA,
        pool=synth_pool(SCHEMA, n=400, seed=3) if pool is None else pool,
        design=design,
        texts=carloan.TEXTS,
        consent_version="1",
        seed=5,
    )


def test_only_balanced_strategies_of_the_study_and_its_conditions_are_queued() -> None:
    study = _study("sparsest:1,random:2")
    assert method_fitting.balanced_strategies(study) == []
    assert method_fitting.fits_queue(study=study) == []
    Condition.objects.create(study=study, name="balanced", design="ebr:1,sparsest:1")
    assert method_fitting.balanced_strategies(study) == ["ebr"]
    rows = method_fitting.fits_queue(study=study)
    again = method_fitting.fits_queue(study=study)
    assert [r.pk for r in rows] == [r.pk for r in again]  # idempotent
    assert FittedMethod.objects.filter(study=study).count() == 1


@override_settings(STUDYAPP_BALANCED_FIT_PARAMS=SMALL_IBR)
def test_fits_run_stores_fits_that_the_worker_reuses(eager: None) -> None:
    study = _study("ebr:1,ibr:1,sparsest:1")
    method_fitting.fits_queue(study=study)  # eager: the task runs at commit (autocommit)
    rows = {r.strategy: r for r in FittedMethod.objects.filter(study=study)}
    assert set(rows) == {"ebr", "ibr"}
    for row in rows.values():
        assert row.state == FittedMethod.State.DONE, row.message
        assert row.progress == 1.0 and row.blob and row.seconds is not None

    # a freshly parsed pool with the stored fit attached scores like a fresh fit
    pool = engine_objects.pool_of(study.pool_csv, SCHEMA)
    assert sorted(stored_fits.attach_fitted(study, pool)) == ["ebr", "ibr"]
    fresh = fit_pool_density(SCHEMA, engine_objects.pool_of(study.pool_csv, SCHEMA))
    attached = get_strategy("ebr").pool_fit.fitted(SCHEMA, pool)
    np.testing.assert_allclose(attached.scores, fresh.scores, rtol=1e-12)
    assert attached.threshold == pytest.approx(fresh.threshold, rel=1e-12)

    # a second run does not fit again
    assert method_fitting.fits_run(study_id=study.pk) == {"ebr": "done", "ibr": "done"}
    assert stored_fits.fits_version(study) == (
        f"ebr:{fit_format('ebr')}#{rows['ebr'].pk}",
        f"ibr:{fit_format('ibr')}#{rows['ibr'].pk}",
    )


@override_settings(STUDYAPP_BALANCED_FIT_PARAMS=SMALL_IBR)
def test_stored_fit_gives_the_recourses_of_the_lazy_path() -> None:
    study = _study("ebr:2,ibr:1")
    method_fitting.fits_queue(study=study)
    method_fitting.fits_run(study_id=study.pk)
    profile = {it.key: 1 for it in SCHEMA.items}

    stored_pool = engine_objects.pool_of(study.pool_csv, SCHEMA)
    stored_fits.attach_fitted(study, stored_pool)
    lazy_pool = engine_objects.pool_of(study.pool_csv, SCHEMA)
    from recourse_engine import IncomeRule, PoolIndex
    from recourse_engine.methods import attach_pool_ibr, fit_pool_ibr

    # the lazy path, with the same small IBR as the stored one
    attach_pool_ibr(lazy_pool, fit_pool_ibr(SCHEMA, lazy_pool, epochs=4))
    picks = []
    for pool in (stored_pool, lazy_pool):
        index = PoolIndex(SCHEMA, pool, IncomeRule())
        sel = index.select(profile, 3_500_000.0, study.design, seed=11)
        picks.append([(p.strategy, p.pool_id) for p in sel.picks])
    assert picks[0] == picks[1] and len(picks[0]) == 3


def test_a_pool_without_the_group_column_fails_with_its_name_and_can_be_requeued() -> None:
    frame = synth_pool(SCHEMA, n=300, seed=2).drop(columns=["gender"])
    study = _study("ebr:1", pool=frame)
    method_fitting.fits_queue(study=study)
    assert method_fitting.fits_run(study_id=study.pk) == {"ebr": "failed"}
    row = FittedMethod.objects.get(study=study)
    assert "gender" in row.message and row.blob is None
    assert stored_fits.attach_fitted(study, engine_objects.pool_of(study.pool_csv, SCHEMA)) == []
    method_fitting.fits_queue(study=study)
    row.refresh_from_db()
    assert row.state == FittedMethod.State.QUEUED and row.message == ""


def test_progress_writer_stores_fractions_and_always_the_end() -> None:
    study = _study("ibr:1")
    (row,) = method_fitting.fits_queue(study=study)
    report = method_fitting.progress_writer(FittedMethod.objects.filter(pk=row.pk))
    report(1, 4)
    row.refresh_from_db()
    assert row.progress == pytest.approx(0.25)
    report(2, 4)  # within 0.5 s of the last write: skipped
    row.refresh_from_db()
    assert row.progress == pytest.approx(0.25)
    report(4, 4)
    row.refresh_from_db()
    assert row.progress == 1.0


def test_progress_writer_rounds_to_the_places_asked() -> None:
    study = _study("ibr:1")
    (row,) = method_fitting.fits_queue(study=study)
    method_fitting.progress_writer(FittedMethod.objects.filter(pk=row.pk), places=2)(1, 3)
    row.refresh_from_db()
    assert row.progress == 0.33


@override_settings(STUDYAPP_BALANCED_FIT_PARAMS=SMALL_IBR)
def test_going_live_queues_and_runs_the_fits(eager: None) -> None:
    study = _study("sparsest:1,ebr:1")
    assert not FittedMethod.objects.filter(study=study).exists()  # a draft fits nothing
    services.study_set_state(study=study, state=Study.State.LIVE)
    row = FittedMethod.objects.get(study=study)
    assert (row.strategy, row.state, row.pool_hash) == ("ebr", "done", study.pool_hash)


@override_settings(STUDYAPP_BALANCED_FIT_PARAMS=SMALL_IBR)
def test_the_worker_index_picks_up_a_fit_stored_after_it_was_built() -> None:
    study = _study("ebr:1,sparsest:1")
    study.state = Study.State.LIVE
    study.save()
    _, before = worker_cache.pool_index_for(study)
    assert worker_cache.pool_index_for(study)[1] is before  # cached while nothing changes
    method_fitting.fits_queue(study=study)
    method_fitting.fits_run(study_id=study.pk)
    _, after = worker_cache.pool_index_for(study)
    assert after is not before
    ebr_fit = get_strategy("ebr").pool_fit
    assert ebr_fit.attached(after.pool) is not None  # attached, not fitted on first use
    assert ebr_fit.attached(before.pool) is None
    stored = FittedMethod.objects.get(study=study, strategy="ebr")
    np.testing.assert_array_equal(
        ebr_fit.attached(after.pool).scores, load_fit("ebr", stored.blob).scores
    )


@override_settings(STUDYAPP_BALANCED_FIT_PARAMS=SMALL_IBR)
def test_the_monitor_shows_fit_progress_to_the_researcher() -> None:
    from django.contrib.auth import get_user_model
    from django.test import Client

    from studyapp.studies.monitor import study_monitor

    study = _study("ebr:1,ibr:1")
    method_fitting.fits_queue(study=study)
    figures = study_monitor(study)["balanced_fits"]
    assert [(f["strategy"], f["state"], f["progress"]) for f in figures] == [
        ("ebr", "queued", 0.0),
        ("ibr", "queued", 0.0),
    ]
    method_fitting.fits_run(study_id=study.pk)
    boss = get_user_model().objects.create_superuser("boss", password="pw-boss-1")
    client = Client()
    client.force_login(boss)
    figures = client.get(f"/console/studies/{study.slug}/monitor.json").json()["balanced_fits"]
    assert [(f["strategy"], f["state"], f["progress"]) for f in figures] == [
        ("ebr", "done", 1.0),
        ("ibr", "done", 1.0),
    ]
    page = client.get(f"/console/studies/{study.slug}/monitor/").content.decode()
    assert 'id="balanced-fits"' in page and "fitted on 400 pool rows" in page


# --- fits stored by another engine version ----------------------------------------------------
class Moved:
    """Stands for a fitted class that was renamed after its fit was stored."""


def _select(study: Study) -> list[tuple[str, str]]:
    _, index = worker_cache.pool_index_for(study)
    profile = {it.key: 1 for it in SCHEMA.items}
    sel = index.select(profile, 3_500_000.0, study.design, seed=11)
    return [(p.strategy, p.pool_id) for p in sel.picks]


def test_a_fit_in_an_older_format_is_never_loaded_and_is_fitted_anew() -> None:
    """A blob written before fits were versioned (a bare pickle, format "") would name classes
    that may have moved: the worker ignores it, and queueing fits the current format."""
    study = _study("ebr:1,sparsest:1")
    fresh = get_strategy("ebr").pool_fit.fit(SCHEMA, engine_objects.pool_of(study.pool_csv, SCHEMA))
    old = FittedMethod.objects.create(
        study=study,
        strategy="ebr",
        pool_hash=study.pool_hash,
        state=FittedMethod.State.DONE,
        blob=pickle.dumps(fresh),
    )
    worker_cache.clear_cache()
    assert stored_fits.fits_version(study) == ()
    assert stored_fits.attach_fitted(study, engine_objects.pool_of(study.pool_csv, SCHEMA)) == []
    lazy = _select(study)  # fitted in-process on first use

    (row,) = method_fitting.fits_queue(study=study)
    assert row.pk != old.pk and row.fit_format == fit_format("ebr")
    assert method_fitting.fits_run(study_id=study.pk) == {"ebr": "done"}
    old.refresh_from_db()
    assert old.state == FittedMethod.State.DONE and old.fit_format == ""  # left as it was
    assert stored_fits.fits_version(study) == (f"ebr:{fit_format('ebr')}#{row.pk}",)
    assert _select(study) == lazy


def test_a_current_format_blob_that_no_longer_loads_is_marked_failed_and_requeued() -> None:
    """A class renamed without a new format string: the blob fails to unpickle, the worker
    fits in-process instead of failing the participant, and the row is fitted again."""
    study = _study("ebr:1,sparsest:1")
    header = dump_fit("ebr", None).split(b"\n", 1)[0] + b"\n"
    moved = header + pickle.dumps(Moved(), protocol=0).replace(__name__.encode(), b"gone_module")
    row = FittedMethod.objects.create(
        study=study,
        strategy="ebr",
        pool_hash=study.pool_hash,
        fit_format=fit_format("ebr"),
        state=FittedMethod.State.DONE,
        blob=moved,
    )
    worker_cache.clear_cache()
    assert len(_select(study)) == 2  # recourses all the same
    row.refresh_from_db()
    assert row.state == FittedMethod.State.FAILED and "does not load" in row.message
    (again,) = method_fitting.fits_queue(study=study)
    assert again.pk == row.pk and again.state == FittedMethod.State.QUEUED
