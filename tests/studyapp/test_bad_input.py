"""Bad input on the participant pages: each gets a clear message and changes nothing."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from django.test import Client

from studyapp.models import Evaluation, Participant, Recourse, Study
from studyapp.participation import services as flow_services
from studyapp.studies import services as study_services
from studyapp.studies import updates as study_updates
from tests.studyapp.conftest import ELIGIBLE, SCHEMA, Walker, start

S = Participant.State


def _snapshot(p: Participant) -> dict[str, Any]:
    p.refresh_from_db()
    return {
        "state": p.state,
        "screening": p.screening,
        "evaluations": sorted(
            Evaluation.objects.filter(participant=p).values_list(
                "recourse_id", "acceptance", "action", "acceptance_why", "impossible"
            )
        ),
        "recourses": Recourse.objects.filter(participant=p).count(),
    }


def _messages(response: Any) -> str:
    """The messages the page shows (the pages are Jinja2: no response.context)."""
    shown = re.findall(r'<p class="message [^"]*">(.*?)</p>', response.content.decode(), re.S)
    return " ".join(html.unescape(m) for m in shown)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("acceptance", "8"),
        ("acceptance", "0"),
        ("acceptance", "abc"),
        ("action", "-1"),
        ("action", "4.5"),
        ("action", ""),
    ],
)
def test_out_of_range_or_bad_scale_values(evaluating: Walker, field: str, value: str) -> None:
    before = _snapshot(evaluating.participant)
    r = evaluating.post(evaluating.evaluation_data(**{field: value}))
    assert r.status_code == 400
    body = r.content.decode()
    assert "Ratings go from 1 to 7" in body or "Please choose a rating from 1 to 7" in body
    assert _snapshot(evaluating.participant) == before


@pytest.mark.parametrize(
    ("drop", "message"),
    [
        ("acceptance", "Please choose a rating from 1 to 7"),
        ("action", "Please choose a rating from 1 to 7"),
        ("acceptance_why", "Please tell us briefly why."),
        ("action_why", "Please tell us briefly why."),
        ("impossible", "(set below: names the item)"),
    ],
)
def test_missing_answers(evaluating: Walker, drop: str, message: str) -> None:
    before = _snapshot(evaluating.participant)
    data = evaluating.evaluation_data()
    if drop == "impossible":
        key = next(k for k in data if k.startswith("impossible_"))
        del data[key]
        label = SCHEMA.item(key.removeprefix("impossible_")).label
        message = f"Impossible for you: {label}? Please answer this question."
    else:
        del data[drop]
    r = evaluating.post(data)
    assert r.status_code == 400 and message in r.content.decode()
    assert _snapshot(evaluating.participant) == before


def test_missing_screening_and_profile_answers(walker: Walker) -> None:
    data = dict(ELIGIBLE)
    del data["income"]
    assert walker.consent().status_code == 302  # consent comes first
    walker.get()
    r = walker.post({"page": "screening", **data})
    assert r.status_code == 400
    assert "Please tell us your annual income (JPY). Please answer this question." in (
        r.content.decode()
    )
    r = walker.post({"page": "screening", **ELIGIBLE, "age": "17"})
    assert r.status_code == 400 and "Please enter a number from 18 to 100" in r.content.decode()
    r = walker.post({"page": "screening", **ELIGIBLE, "gender": "9"})
    assert r.status_code == 400 and "Please choose one of the listed options" in r.content.decode()
    assert walker.participant.state == S.SCREENING and walker.participant.screening == {}


def test_tampered_page_field(evaluating: Walker) -> None:
    before = _snapshot(evaluating.participant)
    r = evaluating.post(evaluating.evaluation_data(page="evaluation-x<script>"), follow=True)
    assert "The form was altered" in _messages(r)
    assert _snapshot(evaluating.participant) == before


def test_tampered_recourse_field_to_own_later_plan(evaluating: Walker) -> None:
    p = evaluating.participant
    later = p.recourses.order_by("position").last()
    before = _snapshot(p)
    r = evaluating.post(evaluating.evaluation_data(recourse=str(later.pk)), follow=True)
    assert "this one is not next" in _messages(r)
    assert _snapshot(p) == before


def test_another_participants_recourse(evaluating: Walker, study: Study) -> None:
    other = start(Client(), study)
    other.to_profile()
    other.submit_profile()
    foreign = other.participant.recourses.first()
    before, before_other = _snapshot(evaluating.participant), _snapshot(other.participant)
    r = evaluating.post(evaluating.evaluation_data(recourse=str(foreign.pk)), follow=True)
    assert "does not belong to any of your plans" in _messages(r)
    assert _snapshot(evaluating.participant) == before
    assert _snapshot(other.participant) == before_other


def test_another_participants_code_in_the_url(evaluating: Walker, study: Study) -> None:
    """A form posted to someone else's link is answered for *their* page: it is refused."""
    other = start(Client(), study)
    before = _snapshot(other.participant)
    r = evaluating.client.post(other.url, evaluating.evaluation_data(), follow=True)
    assert "That page is not open yet; nothing was stored." in _messages(r)
    assert _snapshot(other.participant) == before


def test_unknown_code(client: Client, study: Study) -> None:
    r = client.get("/p/not-a-real-code/")
    assert r.status_code == 404 and "This participant link is not valid" in r.content.decode()
    r = client.post("/p/not-a-real-code/", {"page": "screening"})
    assert r.status_code == 404
    assert client.get("/p/not-a-real-code/status").status_code == 404


def test_double_submit_stores_one_evaluation(evaluating: Walker) -> None:
    data = evaluating.evaluation_data()
    first = evaluating.post(data)
    second = evaluating.post({**data, "acceptance": "1"}, follow=True)
    assert first.status_code == 302
    assert "were already saved and are kept" in _messages(second) or "already submitted" in (
        _messages(second)
    )
    evs = Evaluation.objects.filter(participant=evaluating.participant)
    assert evs.count() == 1 and evs.get().acceptance == 5


def test_back_button_never_overwrites(evaluating: Walker) -> None:
    first = evaluating.evaluation_data()
    evaluating.post(first)
    # the browser's back button shows plan 1 again; its form is posted with new answers
    evaluating.post({**first, "acceptance": "1", "action": "7", "acceptance_why": "changed"})
    ev = Evaluation.objects.get(recourse_id=int(first["recourse"]))
    assert (ev.acceptance, ev.action, ev.acceptance_why) == (5, 3, "seems fair")
    assert evaluating.page() == "evaluation-2"


def test_finished_participant_going_back(evaluating: Walker) -> None:
    while evaluating.participant.state == S.EVALUATING:
        evaluating.post(evaluating.evaluation_data())
    p = evaluating.participant
    assert p.state == S.COMPLETED
    before = _snapshot(p)
    profile_before = dict(p.profile.values)
    for page, data in [
        ("screening", {**ELIGIBLE, "occupation": "9"}),
        ("consent", {"agree": "on"}),
        ("profile", {k: "2" for k in p.profile.values}),
        ("evaluation-1", {"acceptance": "1", "action": "1"}),
    ]:
        r = evaluating.post({"page": page, **data}, follow=True)
        assert r.status_code == 200 and "already submitted" in _messages(r)
    assert _snapshot(p) == before
    p.refresh_from_db()
    assert (
        p.profile.values == profile_before
        and p.completion_code in evaluating.get().content.decode()
    )


def test_impossible_only_for_changed_items(evaluating: Walker) -> None:
    p = evaluating.participant
    current = p.recourses.filter(evaluation__isnull=True).order_by("position").first()
    unchanged = next(k for k in current.values if k not in current.changed)
    data = evaluating.evaluation_data(**{f"impossible_{unchanged}": "yes"})
    assert evaluating.post(data).status_code == 302
    assert unchanged not in Evaluation.objects.get(recourse=current).impossible
    following = p.recourses.filter(evaluation__isnull=True).order_by("position").first()
    not_changed = next(k for k in following.values if k not in following.changed)
    with pytest.raises(flow_services.RejectedSubmission, match="Only changed items"):
        flow_services.evaluation_submit(
            participant=p,
            recourse_id=following.pk,
            acceptance=4,
            acceptance_why="",
            impossible=[not_changed],
            action=4,
            action_why="",
            then=Participant.State.COMPLETED,
        )
    assert not Evaluation.objects.filter(recourse=following).exists()


def test_overlong_reason(evaluating: Walker) -> None:
    before = _snapshot(evaluating.participant)
    r = evaluating.post(evaluating.evaluation_data(action_why="x" * 2001))
    assert r.status_code == 400 and "under 2000 characters" in r.content.decode()
    assert _snapshot(evaluating.participant) == before


@pytest.mark.parametrize("pid", ["<script>", "a" * 101, "with space"])
def test_bad_recruitment_id(client: Client, study: Study, pid: str) -> None:
    r = client.get(f"/s/{study.slug}/", {"PROLIFIC_PID": pid})
    assert r.status_code == 400 and "PROLIFIC_PID in this link is not valid" in r.content.decode()
    assert Participant.objects.count() == 0


def test_study_not_live(client: Client, transactional_db: Any) -> None:
    from tests.studyapp.conftest import make_study

    draft = make_study(slug="draft", state="draft")
    r = client.get(f"/s/{draft.slug}/")
    assert r.status_code == 404 and "not open" in r.content.decode()
    assert Participant.objects.count() == 0


def test_live_study_design_is_frozen(study: Study) -> None:
    with pytest.raises(study_services.StudyError, match="frozen"):
        study_updates.study_update_design(study=study, design="random:5")
    study.refresh_from_db()
    assert study.design == "sparsest:1,proximate:1,random:3"


def test_bad_study_definitions(transactional_db: Any) -> None:
    from tests.studyapp.conftest import make_study

    with pytest.raises(study_services.StudyError, match="design"):
        study_updates.study_update_design(study=make_study(state="draft"), design="sparsest:0")
    with pytest.raises(study_services.StudyError, match="pool"):
        study_services.study_create(
            slug="bad",
            title="bad",
            schema=make_study.__globals__["SCHEMA"],
            pool="id,income\n1,100\n",
            design="random:1",
            texts={},
            consent_version="1",
        )
    assert Study.objects.filter(slug="bad").count() == 0


def test_rating_constraint_in_the_database(evaluating: Walker) -> None:
    from django.db import IntegrityError, transaction

    p = evaluating.participant
    with pytest.raises(IntegrityError), transaction.atomic():
        Evaluation.objects.create(
            recourse=p.recourses.first(), participant=p, acceptance=8, action=1, seconds_on_page=1
        )


def test_profile_service_refuses_bad_codes(walker: Walker) -> None:
    walker.to_profile()
    p = walker.participant
    good = {it["key"]: 1 for it in p.study.schema["profile_items"]}
    with pytest.raises(flow_services.RejectedSubmission, match="missing: Workplace"):
        flow_services.profile_submit(
            participant=p, values={k: v for k, v in good.items() if k != "workplace"}
        )
    with pytest.raises(
        flow_services.RejectedSubmission, match="listed options: Educational background"
    ):
        flow_services.profile_submit(participant=p, values={**good, "education": 6})
    r = walker.post({"page": "profile", **{k: "1" for k in good}, "education": "6"})
    assert r.status_code == 400 and "Please choose one of the listed options" in r.content.decode()
    p.refresh_from_db()
    assert p.state == S.PROFILE and not hasattr(p, "profile") and p.generation == ""
