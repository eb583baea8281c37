"""A study whose design names recourse methods: refused at save or at go-live when a method
cannot work, fitted at go-live and reused, shown to participants with origin, method,
parameters, fit version and ranks, and falling back (recorded) when a fit is not ready."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from django.test import Client, override_settings

from recourse_engine import load_model
from studyapp.definition import engine_objects
from studyapp.definition.errors import ConfigError, StudyError
from studyapp.export import export_study
from studyapp.generation import method_fitting, services, stored_fits, worker_cache
from studyapp.models import FittedMethod, Participant, Study
from studyapp.studies import comparison, updates
from studyapp.studies import services as study_services
from tests.studyapp.conftest import SCHEMA, Walker, make_study, start

DESIGN = "proximate:1,wachter:1,gs:1"
PARAMS = {"wachter": {"max_iter": 300}}
#: a profile the items model rejects (lowest options, which the synthetic pool pays least)
LOW = {it.key: "1" for it in SCHEMA.items}


def _draft(slug: str = "cmp", design: str = DESIGN) -> Study:
    study = comparison.comparison_study_create(slug=slug, design="proximate:1", pool_size=400)
    return updates.study_update(study=study, changes={"design": design, "method_params": PARAMS})


def _walker(study: Study) -> Walker:
    w = start(Client(), study)
    w.to_profile()
    assert w.submit_profile(LOW).status_code == 302
    return w


def _walk_to_waiting(study: Study) -> Participant:
    return _walker(study).participant


def _config_error(exc: ConfigError) -> dict[str, str]:
    return dict(exc.problems)


# --- refused when saved (or, for want of a model, at go-live) --------------------------------
def test_a_method_the_income_rule_cannot_judge_is_saved_but_refused_at_go_live(db: Any) -> None:
    """A draft may name methods before its model is trained (the model is trained on the
    study's pool, which exists only once the study does); going live says what to do."""
    study = make_study(state="draft")
    study = updates.study_update(study=study, changes={"design": "proximate:1,wachter:1"})
    assert study.design == "proximate:1,wachter:1"
    with pytest.raises(StudyError) as err:
        study_services.study_set_state(study=study, state=Study.State.LIVE)
    assert "the design names wachter, which need a decision model" in str(err.value)
    assert "train one on the pool in the console" in str(err.value)
    study.refresh_from_db()
    assert study.state == Study.State.DRAFT  # nothing changed


@pytest.mark.parametrize(
    ("changes", "path", "message"),
    [
        ({"method_params": {"nope": {}}}, "method_params.nope", "unknown recourse method 'nope'"),
        (
            {"method_params": {"gs": {"stepsize": 1}}},
            "method_params.gs",
            "gs: unknown parameter 'stepsize'",
        ),
        ({"design": "proximate:1,causal:1"}, "design", "causal: needs a structural causal model"),
        ({"design": "proximate:1,wachter:2"}, "design[1]", "generates one counterfactual"),
        ({"design": "proximate:1,fancy:1"}, "design[1]", "unknown strategy 'fancy'"),
        ({"method_fallback": "anything"}, "method_fallback", ""),
        (
            {"method_params": {"causal": {"scm": {"position": {"shoe": 1}}}}},
            "method_params.causal",
            "scm names 'shoe', which is not a profile item",
        ),
    ],
)
def test_bad_method_settings_are_refused_and_change_nothing(
    db: Any, changes: dict[str, Any], path: str, message: str
) -> None:
    study = _draft()
    before = (study.design, study.method_params, study.method_fallback)
    with pytest.raises(ConfigError) as err:
        updates.study_update(study=study, changes=changes)
    problems = _config_error(err.value)
    assert path in problems, problems
    assert message in problems[path]
    study.refresh_from_db()
    assert (study.design, study.method_params, study.method_fallback) == before


# --- refused when made live -----------------------------------------------------------------
def test_going_live_is_refused_when_the_uploaded_model_cannot_serve_a_method(db: Any) -> None:
    study = _draft()
    # a model trained with income judges no generated profile (they have none)
    from recourse_engine.decision import train_sklearn_model

    schema = engine_objects.schema_of(study.schema)
    pool = engine_objects.pool_of(study.pool_csv, schema)
    pool.extra["approved"] = (pool.income >= np.median(pool.income)).astype(int)
    model = train_sklearn_model(schema, pool, "approved", use_income=True)
    import tempfile

    from recourse_engine import save_model

    with tempfile.TemporaryDirectory() as tmp:
        blob = save_model(model, Path(tmp) / "m").read_bytes()
    updates.study_set_decision_model(study=study, name="uploaded", blob=blob)
    with pytest.raises(StudyError) as err:
        study_services.study_set_state(study=study, state=Study.State.LIVE)
    assert "cannot go live" in str(err.value)
    assert (
        "wachter generates profiles that have no income, but the decision model was trained with income"
        in str(err.value)
    )
    study.refresh_from_db()
    assert study.state == Study.State.DRAFT and not FittedMethod.objects.filter(study=study)


def test_going_live_is_refused_when_the_balanced_group_is_missing(db: Any) -> None:
    study = _draft(design="proximate:1,ebr_generated:1")
    updates.study_update(study=study, changes={"method_params": {"ebr": {"group": "shoe"}}})
    with pytest.raises(StudyError, match="pool has no group column 'shoe' for the ebr strategy"):
        study_services.study_set_state(study=study, state=Study.State.LIVE)


# --- fitted at go-live, shown, exported -----------------------------------------------------
def test_methods_are_fitted_at_go_live_and_their_recourses_exported(
    transactional_db: Any, eager: None, tmp_path: Path
) -> None:
    study = _draft()
    study_services.study_set_state(study=study, state=Study.State.LIVE)
    rows = {r.strategy: r for r in stored_fits.usable_rows(study)}
    assert set(rows) == {"method:gs", "method:wachter"}
    for row in rows.values():
        assert row.progress == 1.0 and row.model_key == stored_fits.model_key(study)
    walkers = [_walker(study) for _ in range(4)]
    model = engine_objects.study_model(study)
    for w in walkers:
        p = w.participant
        assert p.state == Participant.State.EVALUATING, p.generation_error
        for r in p.recourses.all():
            codes = np.array([r.values[k] for k in SCHEMA.keys], dtype=float)
            assert model.approves(codes[None])[0]
        while w.participant.recourses.filter(evaluation__isnull=True).exists():
            w.get()
            assert w.post(w.evaluation_data()).status_code == 302
    export_study(study=study, out=tmp_path)
    ev = pd.read_csv(tmp_path / "evaluations.csv", keep_default_na=False)
    assert len(ev) == 12
    gen = ev[ev["origin"] == "generated"]
    assert len(gen) >= 4 and set(gen["method"]) <= {"wachter", "gs"}
    for _, r in gen.iterrows():
        row = rows[f"method:{r['method']}"]
        assert r["fit_version"] == stored_fits.fit_version(row.fit_format, bytes(row.blob))
        params = json.loads(r["method_params"])
        assert params["seed"] == 0
        if r["method"] == "wachter":
            assert params["max_iter"] == 300  # the study's setting, recorded
        assert r["fallback"] == "" and r["strategy"] == r["method"]
        assert int(r["sparsity_rank"]) >= 1 and int(r["proximity_rank"]) >= 1
    pool_rows = ev[ev["origin"] == "pool"]
    assert set(pool_rows["method"]) <= {"pool_search", "wachter", "gs"}
    assert (pool_rows[pool_rows["method"] != "pool_search"]["fallback"] != "").all()
    # the stored fit is loaded once per worker and reused for every participant
    design, schema = engine_objects.design_of(DESIGN), engine_objects.schema_of(study.schema)
    gens, pending = worker_cache.generators_for(study, design, schema)
    again, _ = worker_cache.generators_for(study, design, schema)
    assert not pending and gens["wachter"].method is again["wachter"].method


def test_a_participant_waits_for_a_running_fit_then_falls_back_recorded(db: Any) -> None:
    study = _draft()
    study_services.study_set_state(study=study, state=Study.State.LIVE)  # not eager: queued
    assert set(stored_fits.current_rows(study).values_list("state", flat=True)) == {"queued"}
    p = _walk_to_waiting(study)
    with pytest.raises(services.FitPending, match="wachter, gs"):
        services.recourses_generate(participant_id=p.pk)
    p.refresh_from_db()
    assert p.state == Participant.State.WAITING and not p.recourses.exists()
    with override_settings(STUDYAPP_FIT_WAIT_S=0):
        assert services.recourses_generate(participant_id=p.pk) == "done"
    p.refresh_from_db()
    shown = {r.strategy: r for r in p.recourses.all()}
    assert set(shown) == {"proximate", "wachter", "gs"}
    for name in ("wachter", "gs"):
        r = shown[name]
        assert (r.origin, r.method) == ("pool", name)
        assert r.fallback.startswith("the method's fit is still queued; the nearest admissible")
    assert p.flagged and "wachter: the method's fit is still queued" in p.flag_reason


def _waiting_with_failed_fits(design: str = DESIGN) -> Participant:
    """A participant waiting for plans in a live study whose method fits all failed ("boom")
    and whose fallback is one plan fewer."""
    study = _draft(design=design)
    updates.study_update(study=study, changes={"method_fallback": "fewer"})
    study_services.study_set_state(study=study, state=Study.State.LIVE)
    FittedMethod.objects.filter(study=study).update(state=FittedMethod.State.FAILED, message="boom")
    return _walk_to_waiting(study)


def test_fewer_plans_when_the_study_says_so(db: Any) -> None:
    p = _waiting_with_failed_fits()
    assert services.recourses_generate(participant_id=p.pk) == "done"
    p.refresh_from_db()
    assert [r.strategy for r in p.recourses.all()] == ["proximate"]
    assert "gs: the method's fit failed (boom); one plan fewer is shown" in p.flag_reason


def test_the_demo_comparison_model_judges_items_only(db: Any) -> None:
    study = _draft()
    schema = engine_objects.schema_of(study.schema)
    with __import__("tempfile").TemporaryDirectory() as tmp:
        path = Path(tmp) / "m"
        path.write_bytes(bytes(study.decision_model_blob))
        model = load_model(path, schema)
    assert not model.use_income and not model.relative_to_factual
    assert json.loads(json.dumps(study.method_params)) == PARAMS
    assert method_fitting.methods_check(study) == []


def test_a_design_of_methods_only_ends_with_the_methods_reason(db: Any) -> None:
    p = _waiting_with_failed_fits(design="wachter:1")
    assert services.recourses_generate(participant_id=p.pk) == "empty"
    p.refresh_from_db()
    assert p.state == Participant.State.NO_RECOURSE and not p.recourses.exists()
    assert p.flag_reason.startswith("no recourse to show (wachter: the method's fit failed (boom)")
