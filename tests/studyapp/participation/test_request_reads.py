"""What the cheaper participant requests must keep: the querysets built once per process
(`selectors`) keep no rows between requests and no participant's filter leaks into
another's; a plan rated meanwhile is refused by the evaluation's unique plan and nothing
is stored; a submit still answers with a redirect to the participant's page (Post/Redirect/
Get); the questions `asked` makes equal what pydantic would make for them."""

from __future__ import annotations

import pytest
from django.test import Client

from studyapp.definition.questions import LanguageOptions, LanguageText, Question, asked
from studyapp.models import Evaluation, PageVisit, Participant, Study
from studyapp.participation import selectors
from studyapp.participation import services as flow_services
from tests.studyapp.conftest import Walker, start

S = Participant.State


def _code(w: Walker) -> str:
    return w.url.rstrip("/").rsplit("/", 1)[-1]


def test_plans_are_read_afresh_for_each_participant(evaluating: Walker, study: Study) -> None:
    p = selectors.participant_get(code=_code(evaluating))
    assert p is not None
    before = selectors.participant_plans(participant=p)
    assert before and not any(r.done for r in before)
    assert {r.participant_id for r in before} == {p.pk}
    response = evaluating.post(evaluating.evaluation_data())
    # Post/Redirect/Get: the submit is answered with a redirect to the participant's page
    assert response.status_code == 302 and response["Location"] == evaluating.url
    after = selectors.participant_plans(participant=p)
    assert [r.pk for r in after] == [r.pk for r in before]
    assert [r.done for r in after] == [True] + [False] * (len(after) - 1)
    other = start(Client(), study)  # no plans yet: none of the first participant's
    q = selectors.participant_get(code=_code(other))
    assert q is not None and q.pk != p.pk
    assert selectors.participant_plans(participant=q) == []


def test_each_code_reads_its_own_participant_as_stored_now(evaluating: Walker) -> None:
    code = _code(evaluating)
    first = selectors.participant_get(code=code)
    assert first is not None and first.state == S.EVALUATING and first.code == code
    assert first.profile.values  # read with the participant
    Participant.objects.filter(pk=first.pk).update(state=S.COMPLETED)
    again = selectors.participant_get(code=code)
    assert again is not None and again is not first and again.state == S.COMPLETED
    assert selectors.participant_get(code="no-such-code") is None


def test_a_plan_rated_meanwhile_is_refused_and_nothing_is_stored(evaluating: Walker) -> None:
    """Plans read before another request rated the current one (a double submit racing
    this one): the insert is refused under the lock, the visit stays open, the participant
    is as they were."""
    p = selectors.participant_get(code=_code(evaluating))
    assert p is not None
    stale = selectors.participant_plans(participant=p)  # read before the rating below
    current = stale[0]
    page = f"evaluation-{current.position}"
    evaluating.get()  # the page's visit
    Evaluation.objects.create(
        recourse=current, participant=p, acceptance=2, action=2, seconds_on_page=1.0
    )
    state_before = Participant.objects.values("state", "attention", "updated_at").get(pk=p.pk)
    with pytest.raises(flow_services.StaleSubmission, match="already saved"):
        flow_services.evaluation_submit(
            participant=p,
            recourse_id=current.pk,
            acceptance=6,
            acceptance_why="",
            impossible=[],
            action=6,
            action_why="",
            plans=stale,
            then=S.COMPLETED,
        )
    assert list(Evaluation.objects.filter(recourse=current).values_list("acceptance")) == [(2,)]
    visit = PageVisit.objects.get(participant=p, page=page)
    assert visit.exited_at is None  # the visit's close was undone with the transaction
    after = Participant.objects.values("state", "attention", "updated_at").get(pk=p.pk)
    assert after == state_before


def test_asked_questions_are_what_pydantic_makes_and_share_nothing() -> None:
    options = ["Under 30", "30 or over"]
    q = asked(key="age", type="single", label="Your age", options=options)
    by_pydantic = Question.model_construct(
        key="age",
        type="single",
        text=LanguageText.model_construct(en="Your age", ja=""),
        options=LanguageOptions.model_construct(en=options, ja=[]),
    )
    assert q == by_pydantic
    assert q.model_fields_set == by_pydantic.model_fields_set == {"key", "type", "text", "options"}
    other = asked(key="job", type="single", label="Your job", options=["a", "b"])
    mutable = [n for n, f in Question.model_fields.items() if f.default_factory is not None]
    assert mutable  # the defaults made by a factory: each question has its own
    for name in mutable:
        assert getattr(q, name) is not getattr(other, name), name
    check = asked(key="att", type="attention", label="Pick two", options=["1", "2"], answer=2)
    assert check.answer == 2 and check.model_fields_set >= {"answer"}
