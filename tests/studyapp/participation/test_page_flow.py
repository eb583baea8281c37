"""The page flow declared once (`flow.SEQUENCE`): a study's order follows from the pages' own
`is_displayed`, every state has its page, a stale form is told from an early one by that
order, and moving a page is one change to the sequence (the transitions follow it)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from studyapp.definition import outcomes
from studyapp.models import Participant, Study
from studyapp.participation import flow, pages
from studyapp.studies import updates
from tests.studyapp.conftest import Walker, make_study, start

S = Participant.State
PRE = {"key": "age_guess", "page": "pre", "type": "number", "min": 18, "max": 99,
       "text": {"en": "How old is the applicant?"}}  # fmt: skip
POST = {"key": "comment", "page": "post", "type": "text", "max_length": 20, "required": False,
        "text": {"en": "Anything to add?"}}  # fmt: skip
RECOURSE = [S.SCENARIO, S.PROFILE, S.DECISION, S.WAITING, S.EVALUATING]


def _study(**fields: Any) -> Study:
    """An unsaved study: the flow reads only its settings."""
    return Study(slug="flow", title="Flow", **fields)


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({}, [S.CONSENT, S.SCREENING, *RECOURSE, S.COMPLETED]),
        ({"page_order": "screening_first"}, [S.SCREENING, S.CONSENT, *RECOURSE, S.COMPLETED]),
        (
            {"questions": [PRE, POST]},
            [S.CONSENT, S.SCREENING, S.QUESTIONS_PRE, *RECOURSE, S.QUESTIONS_POST, S.COMPLETED],
        ),
        (
            {"kind": "pool_collection", "questions": [POST]},
            [S.CONSENT, S.SCREENING, S.PROFILE, S.QUESTIONS_POST, S.COMPLETED],
        ),
    ],
    ids=["consent-first", "screening-first", "questionnaires", "pool-collection"],
)
def test_a_study_walks_the_declared_pages_it_displays(fields: dict, expected: list) -> None:
    study = _study(**fields)
    assert flow.states(study) == expected
    assert flow.first_state(study) == expected[0]
    assert [flow.after(study, s) for s in expected] == [*expected[1:], ""]


def test_delayed_release_pages_stand_between_profile_and_the_evaluations() -> None:
    delayed = _study(release_mode="delayed", release_after_days=3)
    names = [cls.name for cls in flow.pages_of(delayed)]
    assert names[names.index("profile") :] == [
        "profile", "decision", "under_review", "waiting", "report", "evaluation", "end",
    ]  # fmt: skip
    assert flow.states(delayed) == flow.states(_study())  # they show while plans are held
    assert "under_review" not in [cls.name for cls in flow.pages_of(_study())]


def test_a_state_the_study_has_no_page_for_has_nothing_after_it() -> None:
    assert flow.after(_study(), S.QUESTIONS_PRE) == ""
    assert flow.after(_study(kind="pool_collection"), S.WAITING) == ""


def test_stale_forms_rank_before_the_current_page_and_unshown_pages_last() -> None:
    study = _study()
    order = ["consent", "screening", "scenario", "profile", "decision", "waiting", "evaluation-1",
             "evaluation-2", "completion"]  # fmt: skip
    ranks = [flow.page_rank(study, key) for key in order]
    assert ranks == sorted(ranks) and len(set(ranks)) == len(ranks)
    assert flow.page_rank(study, "questions_pre") == flow.page_rank(study, "completion")
    delayed = _study(release_mode="delayed", release_after_days=3)
    assert (
        flow.page_rank(delayed, "profile")
        < flow.page_rank(delayed, "under_review")
        < flow.page_rank(delayed, "report")
        < flow.page_rank(delayed, "evaluation-1")
    )


def test_known_keys_are_the_pages_and_the_endings() -> None:
    assert {e.page for e in outcomes.ENDINGS} <= flow.KNOWN_KEYS
    assert "end" not in flow.KNOWN_KEYS  # an end page's key is its ending's
    assert flow.is_known_key("evaluation-7") and not flow.is_known_key("evaluation-0")
    assert not flow.is_known_key("evaluation-x") and not flow.is_known_key("questions")


def test_every_state_has_one_page(transactional_db: Any) -> None:
    study = make_study()
    participant = Participant.objects.create(study=study, state=S.CONSENT)
    for state in S.values:
        participant.state = state
        page = flow.page_for(participant)
        assert page.is_end == outcomes.is_end(state), state
        if page.is_end:
            assert page.key == outcomes.BY_STATE[state].page and page.then == ""
        else:
            assert page.state == state and page.then == flow.after(study, state)
    participant.state = S.CONSENT
    study.page_order = "screening_first"  # the study's own consent page, after the screening
    page = flow.page_for(participant)
    assert type(page) is pages.LateConsentPage and page.then == S.SCENARIO


def test_moving_a_page_is_one_change_to_the_sequence(
    transactional_db: Any, eager: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The questionnaire moved after the scenario in the sequence alone: the pages and the
    transitions follow (no service names a page's neighbour)."""
    study = make_study(state="draft")
    updates.study_update(study=study, changes={"questions": [PRE]})
    Study.objects.filter(pk=study.pk).update(state=Study.State.LIVE)
    moved = list(flow.SEQUENCE)
    moved.remove(pages.QuestionsPrePage)
    moved.insert(moved.index(pages.ScenarioPage) + 1, pages.QuestionsPrePage)
    monkeypatch.setattr(flow, "SEQUENCE", tuple(moved))
    walker: Walker = start(Client(), study)
    seen = []
    answers = {"consent": {"agree": "on"}, "questions_pre": {"q__age_guess": "40"}}
    while (page := walker.page()) != "profile":
        seen.append(page)
        data = {"page": page, **answers.get(page, {})}
        if page == "screening":
            assert walker.screening().status_code == 302
        else:
            assert walker.post(data).status_code == 302, page
    assert seen == ["consent", "screening", "scenario", "questions_pre"]
    assert walker.participant.answers == {"age_guess": 40}
    assert walker.submit_profile().status_code == 302
    assert walker.participant.state == S.EVALUATING
