"""The decision model's verdict is a page the participant sees, and an approved profile takes
the study's approved branch: its own ending (code, text) or a hypothetical rejection recorded
as such; never "declined" when it was not. The decision page waits for Continue, refuses it
before the study's minimum time (nothing stored), and its visit is exported with its time."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from django.test import Client

from recourse_engine import rejects_factual
from studyapp.definition.errors import ConfigError
from studyapp.export import export_study
from studyapp.models import PageVisit, Participant, Profile, Study
from studyapp.participation import services
from studyapp.studies import comparison, monitor, updates
from studyapp.studies import services as study_services
from tests.studyapp.conftest import ELIGIBLE, PROFILE, SCHEMA, Walker, make_study, start

S = Participant.State
#: the highest option of every item: the items model approves it (the lowest it rejects)
HIGH = {it.key: str(len(it.options)) for it in SCHEMA.items}
LOW = PROFILE


def _trained(slug: str = "trained", **changes: Any) -> Study:
    """A live study deciding with a model trained on its items (it approves some profiles)."""
    study = comparison.comparison_study_create(slug=slug, design="proximate:1", pool_size=400)
    if changes:
        study = updates.study_update(study=study, changes=changes)
    return study_services.study_set_state(study=study, state=Study.State.LIVE)


#: the income of ELIGIBLE's band (3M-4M JPY)
INCOME = 3_500_000.0


def _codes(profile: dict[str, str]) -> np.ndarray:
    return np.array([float(profile[k]) for k in SCHEMA.keys])


@pytest.fixture
def trained(transactional_db: Any) -> Study:
    study = _trained()
    model = services._decision_model(study)
    assert not rejects_factual(model, _codes(HIGH), INCOME), "the model approves HIGH"
    assert rejects_factual(model, _codes(LOW), INCOME), "the model rejects LOW"
    return study


def _at_profile(study: Study) -> Walker:
    w = start(Client(), study)
    w.to_profile()
    return w


# --- the setting ----------------------------------------------------------------------------
def test_an_unknown_approved_branch_or_a_negative_minimum_is_refused_and_nothing_changes(
    db: Any,
) -> None:
    study = make_study(state="draft")
    for changes, path in (
        ({"approved_branch": "declined"}, "approved_branch"),
        ({"page_min_seconds": {"decision": -1}}, "page_min_seconds.decision"),
        ({"page_min_seconds": {"evaluation": 5}}, "page_min_seconds.evaluation"),
    ):
        with pytest.raises(ConfigError) as err:
            updates.study_update(study=study, changes=changes)
        problems = dict(err.value.problems)
        assert path in problems, problems
        study.refresh_from_db()
        assert study.approved_branch == "end" and study.page_min_seconds == {}
    ok = updates.study_update(
        study=study,
        changes={"approved_branch": "hypothetical", "page_min_seconds": {"decision": 0}},
    )
    assert ok.approved_branch == "hypothetical" and ok.page_min_seconds == {}


# --- the approved branch --------------------------------------------------------------------
def test_an_approved_profile_ends_with_the_approved_outcome_and_sees_no_rejection(
    trained: Study, eager: None
) -> None:
    w = _at_profile(trained)
    assert w.submit_profile(HIGH).status_code == 302
    p = w.participant
    assert p.state == S.APPROVED and p.profile.decision == "approved"
    assert p.completion_code == trained.outcome_codes["approved"]["code"] != ""
    assert p.generation == "" and not p.recourses.exists()  # no plans were made
    body = w.get().content.decode()
    assert 'id="approved-code"' in body and p.completion_code in body
    assert "approved" in body and "declined" not in body.lower()
    assert trained.texts["en"]["rejection"][:30] not in body


def test_the_hypothetical_branch_goes_on_under_a_worded_hypothesis_recorded_per_participant(
    transactional_db: Any, eager: None, tmp_path: Path
) -> None:
    study = _trained("hypo", approved_branch="hypothetical")
    approved, rejected = _at_profile(study), _at_profile(study)
    approved.submit_profile(HIGH, through_decision=False)
    rejected.submit_profile(LOW, through_decision=False)
    body = approved.get().content.decode()
    assert approved.page() == "decision" and 'id="hypothetical"' in body
    assert "suppose" in body and 'id="rejection"' not in body
    assert 'id="rejection"' in rejected.get().content.decode()
    assert approved.participant.profile.decision == services.HYPOTHETICAL
    assert rejected.participant.profile.decision == "rejected"
    assert approved.continue_decision().status_code == 302
    # on as a rejected participant goes (HIGH, the top of every item, may have no plan)
    assert approved.participant.state in (S.EVALUATING, S.NO_RECOURSE)
    export_study(study=study, out=tmp_path)
    pa = pd.read_csv(tmp_path / "participants.csv", keep_default_na=False)
    assert sorted(pa["decision"]) == ["hypothetical", "rejected"]


def test_monitor_and_export_count_the_approved_outcome(
    trained: Study, eager: None, tmp_path: Path
) -> None:
    _at_profile(trained).submit_profile(HIGH)
    _at_profile(trained).submit_profile(LOW)
    m = monitor.study_monitor(trained)
    assert m["by_state"][S.APPROVED] == 1
    assert m["decisions"] == {
        "rejected": 1, "approved": 1, "hypothetical": 0, "profiles": 2, "approval_rate": 0.5,
    }  # fmt: skip
    export_study(study=trained, out=tmp_path)
    pa = pd.read_csv(tmp_path / "participants.csv", keep_default_na=False)
    assert sorted(pa["outcome"]) == ["approved", "incomplete"]
    assert sorted(pa["state"]) == ["approved", "evaluating"]
    cb = pd.read_csv(tmp_path / "codebook.csv", keep_default_na=False)
    outcome = cb[(cb["file"] == "participants.csv") & (cb["column"] == "outcome")].iloc[0]
    assert "approved" in outcome["allowed"].split("; ")


# --- the decision page ----------------------------------------------------------------------
def test_a_rejected_participant_stays_on_the_decision_page_until_continue(
    study: Study, eager: None, tmp_path: Path
) -> None:
    w = _at_profile(study)
    w.submit_profile(through_decision=False)
    p = w.participant
    assert p.state == S.DECISION and p.generation == "done"  # plans ready, still here
    body = w.get().content.decode()
    assert w.page() == "decision" and 'id="rejection"' in body
    assert 'id="decision-continue"' in body and "decision.js" in body
    assert w.participant.state == S.DECISION  # viewing again moves nothing
    assert w.continue_decision().status_code == 302
    assert w.participant.state == S.EVALUATING and w.page() == "evaluation-1"
    visit = PageVisit.objects.get(participant=p, page="decision")
    assert visit.exited_at is not None and visit.exited_at >= visit.entered_at
    export_study(study=study, out=tmp_path)
    visits = pd.read_csv(tmp_path / "page_visits.csv", keep_default_na=False)
    row = visits[visits["page"] == "decision"].iloc[0]
    assert float(row["seconds"]) >= 0 and row["exited_at"] != ""


def test_continue_before_the_plans_are_ready_leads_to_the_waiting_page(study: Study) -> None:
    w = _at_profile(study)  # not eager: the task stays queued
    w.submit_profile(through_decision=False)
    assert w.participant.state == S.DECISION
    status = w.client.get(w.url.rstrip("/") + "/status").json()
    assert status["ready"] is False and status["state"] == "decision"
    w.continue_decision()
    assert w.participant.state == S.WAITING
    assert 'id="progress"' in w.get().content.decode()


def test_a_continue_before_the_minimum_time_is_refused_with_a_message_and_stores_nothing(
    study: Study, eager: None
) -> None:
    Study.objects.filter(pk=study.pk).update(page_min_seconds={"decision": 30})
    w = _at_profile(Study.objects.get(pk=study.pk))
    w.submit_profile(through_decision=False)
    body = w.get().content.decode()
    assert 'data-wait-s="30"' in body or 'data-wait-s="29"' in body
    r = w.post({"page": "decision"}, follow=True)
    assert "you can continue in" in r.content.decode()
    p = w.participant
    visit = PageVisit.objects.get(participant=p, page="decision")
    assert p.state == S.DECISION and visit.exited_at is None
    PageVisit.objects.filter(pk=visit.pk).update(
        entered_at=visit.entered_at - timedelta(seconds=31)
    )
    assert w.continue_decision().status_code == 302
    assert w.participant.state == S.EVALUATING


def test_with_delayed_release_the_decision_page_precedes_under_review(
    transactional_db: Any, eager: None
) -> None:
    study = make_study(state="draft", slug="delayed")
    study = updates.study_update(
        study=study, changes={"release_mode": "delayed", "release_after_days": 2}
    )
    study = study_services.study_set_state(study=study, state=Study.State.LIVE)
    w = start(Client(), study)
    w.screening(ELIGIBLE)
    w.get()
    w.post({"page": "scenario"})
    w.submit_profile(through_decision=False)
    assert w.page() == "decision"
    w.continue_decision()
    assert w.page() == "under_review"
    assert Profile.objects.get(participant=w.participant).decision == "rejected"


def test_a_bot_reads_the_decision_page_and_presses_continue_after_the_minimum(
    study: Study, eager: None
) -> None:
    from studyapp.simulation.bots import Bot

    Study.objects.filter(pk=study.pk).update(page_min_seconds={"decision": 1})
    result = Bot(Study.objects.get(pk=study.pk), seed=3).run()
    assert result.outcome == "completed"
    assert result.pages[result.pages.index("profile") + 1] == "decision"
    assert "waiting" not in result.pages  # Continue opened once the plans were ready
    visit = PageVisit.objects.get(page="decision")
    assert (visit.exited_at - visit.entered_at).total_seconds() >= 1


def test_no_plan_found_is_read_on_the_decision_page_and_ends_on_continue(study: Study) -> None:
    from studyapp.generation.services import recourses_fail

    w = _at_profile(study)  # not eager: the worker's part is run below
    w.submit_profile(through_decision=False)
    recourses_fail(participant_id=w.participant.pk, error="test: no plan")
    p = w.participant
    assert p.state == S.DECISION and p.generation == "failed" and p.flagged
    assert w.client.get(w.url.rstrip("/") + "/status").json()["ready"] is True
    w.continue_decision()
    p = w.participant
    assert p.state == S.NO_RECOURSE
    assert p.completion_code == study.outcome_codes["completed"]["code"]
