"""Issue 16 through the real views: consent first and declining it, researcher-defined items
of every type (bad input refused with a message, nothing stored changed), bots answering
them, preview participants, the waiting-page time-out, block randomisation, page time-outs,
the CSRF failure page and label suffixes."""

from __future__ import annotations

import io
import zipfile
from datetime import timedelta
from typing import Any

import pandas as pd
import pytest
from django.test import Client
from django.utils import timezone

from studyapp.export import export_zip_stream
from studyapp.generation import services as generation
from studyapp.models import PageVisit, Participant, Quota, Study
from studyapp.participation import assignment, preview, waiting
from studyapp.simulation.bots import Bot
from studyapp.studies import updates
from tests.studyapp.conftest import ELIGIBLE, PROFILE, Walker, make_study, start

S = Participant.State


def _q(key: str, page: str, type_: str, **extra: Any) -> dict[str, Any]:
    return {"key": key, "page": page, "type": type_, "text": {"en": f"Question {key}?"}, **extra}


EVERY_TYPE = [
    _q("trust", "evaluation", "likert", points=5, options={"en": ["No", "b", "c", "d", "Yes"]}),
    _q("fair", "evaluation", "slider", min=0, max=10, step=1),
    _q("age_guess", "pre", "number", min=18, max=99),
    _q("tools", "pre", "multi", options={"en": ["Mail", "Chat", "Phone"]}),
    _q("check", "pre", "attention", options={"en": ["Red", "Blue"]}, answer=2),
    _q("mood", "post", "single", options={"en": ["Good", "Bad"]}),
    _q("comment", "post", "text", max_length=20, required=False),
]


def _draft(**settings: Any) -> Study:
    study = make_study(state="draft")
    updates.study_update(study=study, changes=settings)
    return study


def _live(**settings: Any) -> Study:
    study = _draft(**settings)
    study.state = Study.State.LIVE
    study.save()
    return study


def _snapshot(p: Participant) -> dict[str, Any]:
    p.refresh_from_db()
    return {"state": p.state, "answers": p.answers, "orders": p.item_orders,
            "attention": p.attention, "evaluations": list(p.evaluations.values())}  # fmt: skip


# --- consent first --------------------------------------------------------------------------
def test_declining_consent_stores_nothing_but_the_count(transactional_db: Any) -> None:
    study = _live()
    w = start(Client(), study, "?PROLIFIC_PID=decliner-1")
    assert w.page() == "consent"
    r = w.post({"page": "consent", "decision": "decline"})
    assert r.status_code == 302
    p = w.participant
    assert p.state == S.DECLINED
    assert p.completion_code == study.outcome_codes["declined_consent"]["code"]
    assert (p.screening, p.recruitment_id, p.panel, p.answers, p.consented_at) == (
        {},
        "",
        {},
        {},
        None,
    )
    assert not PageVisit.objects.filter(participant=p).exists()
    end = w.get().content.decode()
    assert 'id="declined-code"' in end and p.completion_code in end
    with zipfile.ZipFile(io.BytesIO(b"".join(export_zip_stream(study)))) as zf:
        pa = pd.read_csv(zf.open("participants.csv"), keep_default_na=False)
    assert list(pa["outcome"]) == ["declined_consent"]
    assert (pa["screen_age"].iloc[0], pa["gender"].iloc[0]) == ("", "")


def test_screening_first_study_declining_erases_the_screening(transactional_db: Any) -> None:
    study = _live(page_order="screening_first")
    w = start(Client(), study)
    assert w.page() == "screening"
    w.post({"page": "screening", **ELIGIBLE})
    assert w.participant.screening and w.page() == "consent"
    w.post({"page": "consent", "decision": "decline"})
    p = w.participant
    assert p.state == S.DECLINED and p.screening == {} and p.age is None and p.gender == ""


def test_consent_needs_the_box_unless_declined(walker: Walker) -> None:
    r = walker.post({"page": "consent"})
    assert (
        r.status_code == 400 and "choose &#x27;I do not agree&#x27; to leave" in r.content.decode()
    )
    assert walker.participant.state == S.CONSENT


# --- researcher-defined items -------------------------------------------------------------------
def test_bad_settings_for_items_are_refused_by_path(transactional_db: Any) -> None:
    from studyapp.definition.errors import ConfigError

    study = make_study(state="draft")
    cases = [
        (
            [_q("a", "pre", "likert", points=3, options={"en": ["x", "y"]})],
            "questions[0].options.en",
        ),
        ([_q("a", "pre", "number", min=5, max=1)], "questions[0].min"),
        (
            [_q("a", "pre", "attention", options={"en": ["x", "y"]}, answer=3)],
            "questions[0].answer",
        ),
        ([_q("a", "pre", "single", options={"en": ["x"]})], "questions[0].options.en"),
        ([_q("a", "pre", "text"), _q("a", "post", "text")], "questions[1].key"),
        ([_q("A b", "pre", "text")], "questions[0].key"),
    ]
    for questions, path in cases:
        with pytest.raises(ConfigError) as exc:
            updates.study_update(study=study, changes={"questions": questions})
        assert path in [p for p, _ in exc.value.problems], (path, exc.value.problems)
    study.refresh_from_db()
    assert study.questions == []


def _to_pre(study: Study) -> Walker:
    w = start(Client(), study)
    assert w.consent().status_code == 302
    assert w.screening().status_code == 302
    assert w.page() == "questions_pre"
    return w


GOOD_PRE = {"q__age_guess": "40", "q__tools": ["1", "3"], "q__check": "2"}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"q__age_guess": "120"}, "Please enter a number from 18 to 99."),  # out of range
        ({"q__age_guess": "forty"}, "Please enter a number."),  # wrong type
        ({"q__age_guess": "40.5"}, "Please enter a whole number."),
        ({"q__age_guess": ""}, "Please answer this question."),  # missing required
        ({"q__tools": ["9"]}, "Please choose only listed options."),
        ({"q__tools": []}, "Please select at least one option."),
        ({"q__check": "7"}, "Please choose one of the listed options."),
    ],
)
def test_bad_answers_on_a_questionnaire_change_nothing(
    transactional_db: Any, change: dict, message: str
) -> None:
    study = _live(questions=EVERY_TYPE)
    w = _to_pre(study)
    before = _snapshot(w.participant)
    r = w.post({"page": "questions_pre", **GOOD_PRE, **change})
    assert r.status_code == 400 and message in r.content.decode()
    assert _snapshot(w.participant) == before


def test_bad_answers_on_plan_and_post_pages_change_nothing(
    eager: None, transactional_db: Any
) -> None:
    study = _live(questions=EVERY_TYPE, random_item_order=["pre"])
    w = _to_pre(study)
    assert w.post({"page": "questions_pre", **GOOD_PRE}).status_code == 302
    p = w.participant
    assert p.answers == {"age_guess": 40, "tools": [1, 3], "check": 2}
    assert sorted(p.item_orders["pre"]) == ["age_guess", "check", "tools"]
    assert p.attention == {"check": 2} and p.attention_failures == 0
    w.get()
    w.post({"page": "scenario"})
    assert w.submit_profile().status_code == 302
    for bad, message in [
        ({"q__trust": "6"}, "Please choose one of the listed options."),
        ({"q__fair": "11"}, "Please enter a number from 0 to 10."),
        ({"q__fair": "x"}, "Please enter a number."),
        ({"q__trust": ""}, "Please answer this question."),
    ]:
        before = _snapshot(w.participant)
        data = w.evaluation_data(**{"q__trust": "4", "q__fair": "7", **bad})
        r = w.post(data)
        assert r.status_code == 400 and message in r.content.decode(), message
        assert _snapshot(w.participant) == before
    n = w.participant.recourses.count()
    for _ in range(n):
        assert w.post(w.evaluation_data(q__trust="4", q__fair="7")).status_code == 302
    ev = w.participant.evaluations.first()
    assert ev.answers == {"trust": 4, "fair": 7} and ev.item_order == ["trust", "fair"]
    assert w.page() == "questions_post"
    before = _snapshot(w.participant)
    r = w.post({"page": "questions_post", "q__mood": "1", "q__comment": "x" * 21})  # too long
    assert (
        r.status_code == 400
        and "Please keep your answer under 20 characters." in r.content.decode()
    )
    assert _snapshot(w.participant) == before
    assert (
        w.post({"page": "questions_post", "q__mood": "2"}).status_code == 302
    )  # optional left out
    p = w.participant
    assert p.state == S.COMPLETED and p.answers["mood"] == 2 and "comment" not in p.answers


def test_a_failed_attention_item_ends_under_the_end_rule(transactional_db: Any) -> None:
    study = _live(questions=EVERY_TYPE)
    w = _to_pre(study)
    assert w.post({"page": "questions_pre", **GOOD_PRE, "q__check": "1"}).status_code == 302
    p = w.participant
    assert p.state == S.FAILED_ATTENTION and p.attention_failures == 1


def test_bots_complete_a_study_with_every_item_type(eager: None, transactional_db: Any) -> None:
    study = _live(questions=EVERY_TYPE, random_item_order=["pre", "evaluation", "post"])
    results = [Bot(study, seed=s).run() for s in range(4)]
    # a bot whose profile has no admissible pool recourse ends early (no_recourse)
    assert {r.outcome for r in results} <= {"completed", "no_recourse"}
    assert sum(r.outcome == "completed" for r in results) >= 2
    for p in Participant.objects.filter(study=study):
        assert p.is_test and {"age_guess", "tools", "check"} <= set(p.answers)
        if p.state == S.COMPLETED:
            assert "mood" in p.answers and p.attention == {"check": 2}
            for ev in p.evaluations.all():
                assert set(ev.answers) == {"trust", "fair"}
                assert sorted(ev.item_order) == ["fair", "trust"]
    zf = zipfile.ZipFile(
        io.BytesIO(b"".join(export_zip_stream(study, with_test=True, with_text=True)))
    )
    ev = pd.read_csv(zf.open("evaluations.csv"))
    pa = pd.read_csv(zf.open("participants.csv"), keep_default_na=False)
    cb = pd.read_csv(zf.open("codebook.csv")).set_index(["file", "column"])
    assert ev["q_trust"].between(1, 5).all() and ev["q_fair"].between(0, 10).all()
    for col in ("q_age_guess", "q_tools", "q_check", "q_mood", "q_comment", "items_order_pre"):
        assert col in pa.columns
    assert cb.loc[("evaluations.csv", "q_trust"), "allowed"] == "1=No; 2=b; 3=c; 4=d; 5=Yes"
    assert cb.loc[("participants.csv", "q_tools"), "type"] == "string"
    assert cb.loc[("participants.csv", "q_age_guess"), "allowed"] == "18..99"
    # the default export leaves the bots out
    zf = zipfile.ZipFile(io.BytesIO(b"".join(export_zip_stream(study))))
    assert len(pd.read_csv(zf.open("participants.csv"))) == 0


# --- preview and test participants ------------------------------------------------------------
def test_a_draft_study_opens_only_through_its_preview_link(transactional_db: Any) -> None:
    study = make_study(state="draft")
    client = Client()
    assert client.get(f"/s/{study.slug}/").status_code == 404
    assert client.get(f"/s/{study.slug}/?preview=forged").status_code == 404
    other = make_study(slug="other", state="draft")
    assert client.get(f"/s/{study.slug}/?preview={preview.preview_token(other)}").status_code == 404
    w = start(client, study, f"?preview={preview.preview_token(study)}")
    p = w.participant
    assert p.is_test and "marked as a test" in w.get().content.decode()


def test_test_participants_hold_no_quota_place(transactional_db: Any) -> None:
    study = _live()
    Quota.objects.create(study=study, limit=1)
    token = preview.preview_token(study)
    tests = [start(Client(), study, f"?preview={token}").participant for _ in range(2)]
    assert [p.state for p in tests] == [S.CONSENT, S.CONSENT]
    assert assignment.filling(study).count() == 0
    real = start(Client(), study).participant
    assert real.state == S.CONSENT and not real.is_test  # the one real place is still free


# --- no one waits forever -----------------------------------------------------------------
def test_waiting_timeout_flags_and_requeues_once_per_period(transactional_db: Any) -> None:
    study = _live(waiting_timeout_s=10)
    w = start(Client(), study)  # tasks stay in the memory broker: nothing runs them
    w.to_profile()
    w.submit_profile()
    p = w.participant
    assert p.state == S.WAITING and p.generation == "queued"
    status = w.client.get(w.url + "status").json()
    assert status["timed_out"] is False and w.participant.wait_timeouts == 0
    Participant.objects.filter(pk=p.pk).update(
        generation_queued_at=timezone.now() - timedelta(seconds=11)
    )
    status = w.client.get(w.url + "status").json()
    assert status["timed_out"] is True and status["ready"] is False
    body = w.get().content.decode()
    assert 'id="timed-out" class="message warning" role="status">' in body  # shown, not hidden
    p.refresh_from_db()
    assert p.wait_timeouts == 1 and p.flagged and "waiting page timed out" in p.flag_reason
    w.client.get(w.url + "status")  # within the same period: no second re-queue
    assert w.participant.wait_timeouts == 1
    from studyapp.studies.monitor import study_monitor

    stuck = study_monitor(study)["stuck_tasks"]
    assert [t["participant"] for t in stuck] == [p.pk] and stuck[0]["waited_s"] >= 11
    reasons = study_monitor(study)["flagged_by_reason"]
    assert reasons[0]["participants"] == [p.pk] and "waiting page timed out" in reasons[0]["reason"]
    # the worker comes back: the task runs, the same link shows the plans
    assert generation.recourses_generate(participant_id=p.pk, may_wait=False) == "done"
    assert w.client.get(w.url + "status").json()["ready"] is True
    assert w.page() == "evaluation-1"


def test_waiting_timeout_does_not_requeue_a_running_task(transactional_db: Any) -> None:
    study = _live(waiting_timeout_s=10)
    w = start(Client(), study)
    w.to_profile()
    w.submit_profile()
    old = timezone.now() - timedelta(seconds=30)
    Participant.objects.filter(pk=w.participant.pk).update(
        generation="running", generation_started_at=old, generation_queued_at=old
    )
    p = w.participant
    assert waiting._stuck(p, timezone.now()) is False  # may be waiting for a method's fit
    long_ago = timezone.now() - timedelta(seconds=waiting.lost_after_s() + 5)
    Participant.objects.filter(pk=p.pk).update(generation_started_at=long_ago)
    assert waiting._stuck(w.participant, timezone.now()) is True


# --- assignment, page time-outs, paradata -------------------------------------------------
def test_block_randomisation_gives_every_condition_once_per_block(transactional_db: Any) -> None:
    conditions = [{"name": n, "design": ""} for n in ("a", "b", "c")]
    study = _live(conditions=conditions, assignment="block_random")
    people = [start(Client(), study).participant for _ in range(9)]
    for block in range(3):
        got = people[3 * block : 3 * block + 3]
        assert sorted(p.condition for p in got) == ["a", "b", "c"]
        assert {p.assignment for p in got} == {f"block_random:{block}"}
    orders = ["".join(p.condition for p in people[i : i + 3]) for i in (0, 3, 6)]
    assert len(set(orders)) > 1  # shuffled per block (seeded), not a fixed rotation


def test_scenario_timeout_is_recorded_only_when_the_time_has_passed(transactional_db: Any) -> None:
    study = _live(page_timeouts={"scenario": 30})
    w = start(Client(), study)
    w.consent()
    w.screening()
    body = w.get().content.decode()
    assert 'data-timeout-s="30"' in body or 'data-timeout-s="29"' in body
    w.post({"page": "scenario", "timeout_happened": "1"})  # too early: a plain submission
    visit = PageVisit.objects.get(participant=w.participant, page="scenario")
    assert visit.timeout_happened is False
    w2 = start(Client(), study)
    w2.consent()
    w2.screening()
    w2.get()
    PageVisit.objects.filter(participant=w2.participant, page="scenario").update(
        entered_at=timezone.now() - timedelta(seconds=31)
    )
    w2.post({"page": "scenario", "timeout_happened": "1"})
    visit = PageVisit.objects.get(participant=w2.participant, page="scenario")
    assert visit.timeout_happened is True and w2.participant.state == S.PROFILE
    zf = zipfile.ZipFile(io.BytesIO(b"".join(export_zip_stream(study))))
    pv = pd.read_csv(zf.open("page_visits.csv"))
    row = pv[(pv["participant"] == w2.participant.pk) & (pv["page"] == "scenario")].iloc[0]
    assert row["timeout"] == 1 and row["seconds"] >= 31 and row["views"] == 1


# --- participant polish -------------------------------------------------------------------
def test_csrf_failure_shows_the_studys_page_with_a_way_back(transactional_db: Any) -> None:
    study = _live(language="ja")
    w = start(Client(), study)
    strict = Client(enforce_csrf_checks=True)
    r = strict.post(w.url, {"page": "consent", "agree": "on"})
    body = r.content.decode()
    assert r.status_code == 403 and '<html lang="ja">' in body
    assert f'href="{w.url}"' in body and 'id="resume"' in body and "Forbidden" not in body
    assert w.participant.state == S.CONSENT


def test_english_labels_end_without_a_doubled_punctuation(walker: Walker) -> None:
    walker.consent()
    body = walker.get().content.decode()
    assert "?:" not in body and "。:" not in body


def test_withdraw_link_is_inside_the_content_column(walker: Walker) -> None:
    body = walker.get().content.decode()
    assert body.index('id="withdraw-link"') < body.index("</main>")


def test_existing_profile_answers_still_work_with_items(eager: None, transactional_db: Any) -> None:
    """A study with only evaluation items has no questionnaire pages."""
    study = _live(questions=[EVERY_TYPE[0]])
    w = start(Client(), study)
    w.to_profile()
    assert w.submit_profile({**PROFILE}).status_code == 302
    assert w.page() == "evaluation-1"
