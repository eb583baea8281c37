"""The design check of a study: run as a task (fitting the draft's methods first, the fits
going live reuses), on the objects a participant's recourse task uses, stored with the
version it checked; its warnings acknowledged at go-live (services, console, API); the
console, the API and the command showing the same figures; bad input refused."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client

from recourse_engine.design_check import check_design, warning_key
from recourse_engine.pool import profile_codes
from studyapp.definition import engine_objects
from studyapp.definition.errors import ConfigError, StudyError
from studyapp.generation import worker_cache
from studyapp.models import DesignCheck, FittedMethod, Study
from studyapp.studies import comparison, design_check, design_check_run, tasks, updates
from studyapp.studies import services as study_services
from studyapp.studies.monitor import study_monitor
from studyapp.studies.monitor_methods import method_figures
from tests.studyapp.conftest import SCHEMA, start

DESIGN = "proximate:1,wachter:1,gs:1"
#: a profile the items model rejects (lowest options, which the synthetic pool pays least)
LOW = {it.key: "1" for it in SCHEMA.items}


def _draft(slug: str = "dc", design: str = DESIGN, **changes: Any) -> Study:
    study = comparison.comparison_study_create(slug=slug, design="proximate:1", pool_size=400)
    return updates.study_update(
        study=study,
        changes={"design": design, "method_params": {"wachter": {"max_iter": 300}}, **changes},
    )


def _run(study: Study, n: int = 60, **kw: Any) -> DesignCheck:
    check = design_check.check_create(study=study, sample_size=n, **kw)
    assert design_check_run.check_run(check_id=check.pk) == DesignCheck.State.DONE, (
        DesignCheck.objects.get(pk=check.pk).message
    )
    check.refresh_from_db()
    return check


@pytest.fixture
def researcher(db: Any) -> Any:
    return get_user_model().objects.create_superuser("res", password="pw-123456")


def test_the_task_fits_a_drafts_methods_that_going_live_then_reuses(
    transactional_db: Any, eager: None
) -> None:
    study = _draft()
    check = tasks.design_check_queue(study=study, sample_size=40)  # eager: runs at commit
    check.refresh_from_db()
    assert check.state == DesignCheck.State.DONE and check.progress == 1.0
    fits = {f.strategy: (f.pk, f.state) for f in study.fitted_methods.all()}
    assert fits == {
        "method:gs": (fits["method:gs"][0], "done"),
        "method:wachter": (fits["method:wachter"][0], "done"),
    }
    (cond,) = check.result["conditions"]
    assert [p["label"] for p in cond["parts"]] == ["proximate", "wachter", "gs"]
    wachter = cond["parts"][1]
    assert wachter["own_plan"] + wachter["fallback"] == check.result["sample"]["rejected"]
    assert design_check.current_check(study) == check
    study_services.study_set_state(
        study=study, state=Study.State.LIVE, acknowledged=[w["key"] for w in _warnings(study)]
    )
    # the same rows, still done: going live fitted nothing again
    assert {f.strategy: (f.pk, f.state) for f in study.fitted_methods.all()} == fits


def _warnings(study: Study) -> list[dict[str, Any]]:
    check = design_check.current_check(study)
    return design_check.check_warnings(study, check) if check else []


def test_the_check_runs_the_participants_selection(db: Any) -> None:
    """A sampled profile gets what a participant with that profile and seed gets: the
    design check calls `PoolIndex.select` with the worker's own index and fitted methods."""
    study = _draft()
    _run(study, n=5)  # fits the methods
    schema, index = worker_cache.pool_index_for(study)
    design = engine_objects.design_of(study.design)
    generators, _ = worker_cache.generators_for(study, design, schema)
    codes = profile_codes(schema, {k: int(v) for k, v in LOW.items()})[None, :]
    result = check_design(index, codes, None, {"": study.design}, {"": generators}, seed=11)
    selection = index.select(codes[0], None, design, seed=[11, 0], generators=generators)
    parts = {p["label"]: p for p in result["conditions"][0]["parts"]}
    for pick in selection.picks:
        part = parts[pick.strategy]
        assert part["sparsity"]["mean"] == pick.sparsity
        assert part["proximity"]["mean"] == pytest.approx(pick.proximity, abs=1e-4)
        if part["method"]:
            assert part["own_plan"] == int(pick.origin == "generated")


def test_a_change_makes_the_stored_check_stale(db: Any) -> None:
    study = _draft()
    check = _run(study, n=10)
    assert design_check.check_summary(study, check)["stale"] is False
    updates.study_update(study=study, changes={"method_fallback": "fewer"})
    assert design_check.current_check(study) is None
    assert design_check.check_summary(study, check)["stale"] is True


def _failing_draft(slug: str = "weak") -> Study:
    """A study whose Wachter almost never reaches an approved profile (one step)."""
    return _draft(
        slug,
        method_params={"wachter": {"max_iter": 1}},
        design_check_thresholds={"approval_rate_above": 1.0, "own_plan_rate_below": 0.8},
    )


def test_go_live_asks_to_acknowledge_each_warning_and_records_it(
    researcher: Any,
) -> None:
    study = _failing_draft()
    check = _run(study, n=40)
    warnings = design_check.check_warnings(study, check)
    key = warning_key("", 1, "wachter")
    assert [w["key"] for w in warnings] == [key]
    assert warnings[0]["value"] < 0.8
    with pytest.raises(design_check.DesignWarnings) as err:
        study_services.study_set_state(study=study, state=Study.State.LIVE)
    assert key in str(err.value) and "wachter shows its own plan to" in str(err.value)
    study.refresh_from_db()
    assert study.state == Study.State.DRAFT  # nothing changed
    check.refresh_from_db()
    assert check.acknowledged == [] and check.acknowledged_at is None
    study_services.study_set_state(
        study=study, state=Study.State.LIVE, acknowledged=[key], by=researcher
    )
    study.refresh_from_db()
    check.refresh_from_db()
    assert study.state == Study.State.LIVE
    assert [w["key"] for w in check.acknowledged] == [key]
    assert check.acknowledged_by == researcher and check.acknowledged_at is not None


def test_console_shows_the_warning_and_goes_live_once_acknowledged(researcher: Any) -> None:
    study = _failing_draft()
    _run(study, n=40)
    key = warning_key("", 1, "wachter")
    client = Client()
    client.force_login(researcher)
    state_url = f"/admin/studyapp/study/{study.pk}/state/"
    r = client.post(state_url, {"state": "live"})
    assert r.status_code == 302 and r["Location"] == f"/console/studies/{study.slug}/design-check/"
    page = client.get(r["Location"]).content.decode()
    assert f'name="acknowledge" value="{key}"' in page
    assert "acknowledge each warning" in page  # the refusal, as a message
    study.refresh_from_db()
    assert study.state == Study.State.DRAFT
    r = client.post(state_url, {"state": "live", "acknowledge": key})
    study.refresh_from_db()
    assert study.state == Study.State.LIVE
    check = design_check.latest_check(study)
    assert check.acknowledged_by == researcher


def test_api_answers_409_with_the_warnings_then_goes_live(researcher: Any) -> None:
    study = _failing_draft()
    _run(study, n=40)
    client = Client()
    client.force_login(researcher)
    url = f"/api/studies/{study.slug}/state/"
    r = client.post(url, {"state": "live"}, content_type="application/json")
    assert r.status_code == 409
    (warning,) = r.json()["warnings"]
    assert warning["key"] == warning_key("", 1, "wachter") and warning["value"] < 0.8
    r = client.post(
        url, {"state": "live", "acknowledge": [warning["key"]]}, content_type="application/json"
    )
    assert r.status_code == 200 and r.json()["state"] == "live"
    assert design_check.latest_check(study).acknowledged[0]["key"] == warning["key"]


def test_console_api_and_command_give_the_same_figures(researcher: Any) -> None:
    study = _draft(
        conditions=[
            {"name": "a", "design": DESIGN},
            {"name": "b", "design": "random:1,wachter:1"},
        ]
    )
    out = StringIO()
    call_command("check_design", study.slug, "--sample", "40", "--json", stdout=out)
    cli = json.loads(out.getvalue())
    assert cli["state"] == "done"
    assert [c["condition"] for c in cli["result"]["conditions"]] == ["a", "b"]
    client = Client()
    client.force_login(researcher)
    api = client.get(f"/api/studies/{study.slug}/design-check/").json()["check"]
    console = client.get(f"/console/studies/{study.slug}/design-check.json").json()["check"]
    assert api == console == cli
    stored = StringIO()
    call_command("check_design", study.slug, "--stored", "--json", stdout=stored)
    assert json.loads(stored.getvalue()) == cli
    page = client.get(f"/console/studies/{study.slug}/design-check/").content.decode()
    for cond in cli["result"]["conditions"]:
        for part in cond["parts"]:
            if part["method"]:
                cell = f'data-own="{cond["condition"]}/{part["label"]}">{part["own_plan_rate"]}<'
                assert cell in page
    assert 'id="check-chart"' in page
    text = StringIO()
    call_command("check_design", study.slug, "--stored", stdout=text)
    assert "condition b: random:1,wachter:1" in text.getvalue()


def test_api_runs_a_check_and_refuses_bad_input(researcher: Any, eager: None) -> None:
    study = _draft()
    client = Client()
    client.force_login(researcher)
    page = client.get(f"/console/studies/{study.slug}/design-check/").content.decode()
    assert 'id="no-check"' in page and 'id="run-check"' in page and 'id="fit-methods"' in page
    url = f"/api/studies/{study.slug}/design-check/"
    assert client.get(url).json() == {"check": None}
    for body, field in (
        ({"sample_size": 0}, "sample_size"),
        ({"sample_size": "many"}, "sample_size"),
        ({"sample_source": "nope"}, "sample_source"),
        ({"samples": 3}, "samples"),
    ):
        r = client.post(url, body, content_type="application/json")
        assert r.status_code == 400 and field in r.json(), (body, r.json())
    assert not DesignCheck.objects.exists()  # nothing stored
    # inside the test's transaction the task is sent at commit, which never comes: queued
    r = client.post(url, {"sample_size": 30}, content_type="application/json")
    assert r.status_code == 202 and r.json()["state"] == "queued"


def test_bad_input_is_refused_with_its_name(db: Any) -> None:
    study = _draft()
    with pytest.raises(StudyError, match="sample_size: must be 1..20000"):
        design_check.check_create(study=study, sample_size=0)
    with pytest.raises(StudyError, match="sample_source: 'elsewhere' is neither"):
        design_check.check_create(study=study, sample_size=5, sample_source="elsewhere")
    with pytest.raises(CommandError, match="sample_size: must be"):
        call_command("check_design", study.slug, "--sample", "0")
    assert not DesignCheck.objects.exists()
    for value, path in (
        ({"approval_rate_above": 1.5}, "design_check_thresholds.approval_rate_above"),
        ({"own_plan_rate_below": -0.1}, "design_check_thresholds.own_plan_rate_below"),
        ({"own_plan_rate": 0.5}, "design_check_thresholds.own_plan_rate"),
    ):
        with pytest.raises(ConfigError) as err:
            updates.study_update(study=study, changes={"design_check_thresholds": value})
        assert path in dict(err.value.problems), err.value.problems
    study.refresh_from_db()
    assert study.design_check_thresholds in (
        {},
        {"approval_rate_above": 0.1, "own_plan_rate_below": 0.8},
    )


def test_fits_for_a_draft_from_the_api(researcher: Any, eager: None) -> None:
    study = _draft()
    client = Client()
    client.force_login(researcher)
    r = client.post(f"/api/studies/{study.slug}/fits/")
    assert r.status_code == 202
    assert sorted(f["strategy"] for f in r.json()["fits"]) == ["method:gs", "method:wachter"]
    assert FittedMethod.objects.filter(study=study).count() == 2


def test_a_pool_collection_study_without_answers_gives_nothing_to_draw(db: Any) -> None:
    from studyapp.studies.pool_collection import pool_collection_study_create

    study = _draft()
    pool_collection_study_create(slug="survey", title="Survey", schema=study.schema)
    check = design_check.check_create(study=study, sample_size=5, sample_source="survey")
    assert design_check_run.check_run(check_id=check.pk) == DesignCheck.State.FAILED
    check.refresh_from_db()
    assert check.message == "survey: no completed answers to draw from"


def test_the_monitor_shows_live_own_plans_beside_the_prediction(
    transactional_db: Any, eager: None
) -> None:
    study = _draft()
    check = _run(study, n=40)
    study_services.study_set_state(
        study=study,
        state=Study.State.LIVE,
        acknowledged=[w["key"] for w in design_check.check_warnings(study, check)],
    )
    walker = start(Client(), study)
    walker.to_profile()
    assert walker.submit_profile(LOW).status_code == 302
    p = walker.participant
    assert p.profile.decision == "rejected" and p.recourses.exists()
    figures = study_monitor(study)["design_check"]
    assert figures["check"] == {
        "id": check.pk,
        "created_at": check.created_at.isoformat(),
        "stale": False,
    }
    assert figures["approval"]["profiles"] == 1 and figures["approval"]["approved"] == 0
    rows = {r["label"]: r for r in figures["methods"]}
    predicted = {x["label"]: x for x in check.result["conditions"][0]["parts"]}
    for label in ("wachter", "gs"):
        own = p.recourses.filter(strategy=label, origin="generated").count()
        assert rows[label]["profiles"] == 1 and rows[label]["own_plan"] == own
        assert rows[label]["predicted_own_plan_rate"] == predicted[label]["own_plan_rate"]
    # test participants are the pilot's, counted apart
    assert method_figures(study, with_test=True)["approval"]["profiles"] == 0
