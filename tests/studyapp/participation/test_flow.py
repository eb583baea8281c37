"""The participant flow end to end through the real views (tasks run eagerly at commit)."""

from __future__ import annotations

from collections import Counter

import pandas as pd
import pytest
from django.db import transaction
from django.test import Client

from studyapp.generation import services as generation_services
from studyapp.models import Evaluation, PageVisit, Participant, Recourse
from studyapp.participation import services as flow_services
from tests.studyapp.conftest import PROFILE, SCHEMA, Walker, make_study, start

S = Participant.State
PROFILE_CODES = {k: int(v) for k, v in PROFILE.items()}


def _proximity(x: dict, cf: dict) -> float:
    """docs/export.md, Distances: |x'-x|/M_i for ordinal items (M_i = n_options - 1), 1 per other change."""
    total = 0.0
    for it in SCHEMA.items:
        if x[it.key] != cf[it.key]:
            total += abs(cf[it.key] - x[it.key]) / (it.n_options - 1) if it.type == "ordinal" else 1
    return total


def _ranks(pool: pd.DataFrame, x: dict, income: float, cf: dict) -> tuple[int, int]:
    """Competition ranks of cf among the admissible pool rows, counted directly."""
    sparsity = len([k for k in SCHEMA.keys if cf[k] != x[k]])
    proximity = round(_proximity(x, cf), 9)
    fewer = closer = 0
    for _, row in pool.iterrows():
        other = {k: int(row[k]) for k in SCHEMA.keys}
        admissible = (
            row["income"] * 3 >= income * 4
            and other != x
            and all(
                (it.constraint != "up" or other[it.key] >= x[it.key])
                and (it.constraint != "down" or other[it.key] <= x[it.key])
                and (it.constraint != "fixed" or other[it.key] == x[it.key])
                for it in SCHEMA.items
            )
        )
        if admissible:
            fewer += len([k for k in SCHEMA.keys if other[k] != x[k]]) < sparsity
            closer += round(_proximity(x, other), 9) < proximity
    return 1 + fewer, 1 + closer


def test_complete_study(walker: Walker, study) -> None:
    assert walker.page() == "consent"  # consent comes first (before any screening answer)
    walker.to_profile()
    assert walker.page() == "profile"
    assert walker.submit_profile().status_code == 302
    p = walker.participant
    assert p.state == S.EVALUATING and p.generation == "done"
    assert p.profile.decision == "rejected"
    assert p.consent_version == study.consent_version and p.consented_at is not None
    recourses = list(p.recourses.order_by("position"))
    assert [r.position for r in recourses] == [1, 2, 3, 4, 5]
    assert Counter(r.strategy for r in recourses) == {"sparsest": 1, "proximate": 1, "random": 3}
    ranks = {r.strategy: (r.sparsity_rank, r.proximity_rank) for r in recourses}
    assert ranks["sparsest"][0] == 1 and ranks["proximate"][1] == 1  # labels that are true
    pool = pd.read_csv(pd.io.common.StringIO(study.pool_csv), dtype={"id": str}).set_index("id")
    x = {k: int(v) for k, v in PROFILE.items()}
    for r in recourses:
        row = pool.loc[r.pool_id]
        assert r.values == {k: int(row[k]) for k in SCHEMA.keys}  # the pool profile itself
        assert row["income"] * 3 >= p.income_jpy * 4  # approved by the income rule
        assert r.changed == [k for k in SCHEMA.keys if r.values[k] != x[k]]
        assert r.sparsity == len(r.changed)
        assert r.proximity == pytest.approx(_proximity(x, r.values))
        assert r.origin == "pool" and r.method == "pool_search"
        assert (r.sparsity_rank, r.proximity_rank) == _ranks(pool, x, p.income_jpy, r.values)
        for it in SCHEMA.items:
            if it.constraint == "up":
                assert r.values[it.key] >= x[it.key]
    seen = []
    for _ in range(5):
        page = walker.page()
        seen.append(page)
        assert walker.post(walker.evaluation_data()).status_code == 302
    assert seen == [f"evaluation-{i}" for i in range(1, 6)]
    p.refresh_from_db()
    assert p.state == S.COMPLETED and p.completion_code and p.finished_at
    body = walker.get().content.decode()
    assert p.completion_code in body
    assert Evaluation.objects.filter(participant=p).count() == 5
    pages = set(PageVisit.objects.filter(participant=p).values_list("page", flat=True))
    assert {"screening", "consent", "scenario", "profile", "evaluation-1"} <= pages


def test_evaluation_page_shows_current_vs_ideal_with_arrows(walker: Walker) -> None:
    walker.to_profile()
    walker.submit_profile()
    r = walker.participant.recourses.order_by("position").first()
    body = walker.get().content.decode()
    assert body.count('<tr class="changed">') == len(r.changed)
    assert body.count("&rarr;") == len(r.changed)
    for key in r.changed:  # impossible? asked for changed items only
        assert f'name="impossible_{key}"' in body
    unchanged = [k for k in SCHEMA.keys if k not in r.changed]
    for key in unchanged:
        assert f'name="impossible_{key}"' not in body
    assert "<fieldset" in body and "<legend" in body  # labelled radio groups


def test_reload_and_resume_in_a_new_browser(walker: Walker) -> None:
    walker.to_profile()
    walker.submit_profile()
    first = walker.page()
    entered = PageVisit.objects.get(participant=walker.participant, page=first).entered_at
    assert walker.page() == first  # reload: same page
    fresh = Walker(Client(), walker.url)  # browser closed, link opened again
    assert fresh.page() == first
    visit = PageVisit.objects.get(participant=walker.participant, page=first)
    assert visit.entered_at == entered and visit.views == 3


def test_screen_out(walker: Walker, study) -> None:
    r = walker.screening({**walker_eligible(), "occupation": "9"})
    assert r.status_code == 302
    p = walker.participant
    assert (
        p.state == S.SCREENED_OUT
        and p.completion_code == study.outcome_codes["screened_out"]["code"]
    )
    assert study.outcome_codes["screened_out"]["code"] in walker.get().content.decode()


def walker_eligible() -> dict:
    from tests.studyapp.conftest import ELIGIBLE

    return dict(ELIGIBLE)


def test_task_is_queued_after_commit(study, eager) -> None:
    w = start(Client(), study)
    w.to_profile()
    w.get()
    with transaction.atomic():
        flow_services.profile_submit(participant=w.participant, values=PROFILE_CODES)
        assert Recourse.objects.count() == 0  # not before the profile is committed
    assert w.participant.recourses.count() == 5


def test_waiting_page_without_reload_loop(study) -> None:
    w = start(Client(), study)
    w.to_profile()
    w.submit_profile()  # not eager: the task waits in the (memory) broker
    body = w.get().content.decode()
    assert 'http-equiv="refresh"' not in body
    assert 'id="check-again"' in body and "waiting.js" in body
    status = w.client.get(w.url + "status").json()
    assert status["ready"] is False and status["generation"] == "queued"
    generation_services.recourses_generate(participant_id=w.participant.pk)
    status = w.client.get(w.url + "status").json()
    assert status["ready"] is True and status["next"] == w.url
    assert w.page() == "evaluation-1"


def test_generation_is_idempotent(study) -> None:
    from studyapp.generation.tasks import generate_recourses

    w = start(Client(), study)
    w.to_profile()
    w.submit_profile()
    pid = w.participant.pk
    generate_recourses.apply(args=[pid])
    before = list(Recourse.objects.filter(participant_id=pid).values_list("pk", "pool_id"))
    generate_recourses.apply(args=[pid])  # a re-delivered task
    generation_services.recourses_generate(participant_id=pid)
    after = list(Recourse.objects.filter(participant_id=pid).values_list("pk", "pool_id"))
    assert len(before) == 5 and after == before


def test_no_admissible_recourse_is_told_politely_and_flagged(transactional_db, eager) -> None:
    from recourse_engine import synth_pool

    pool = synth_pool(SCHEMA, n=200, seed=3)
    pool["income"] = 1_000_000  # nobody earns 4/3 of a 3.5M income
    study = make_study(slug="poor", pool=pool)
    w = start(Client(), study)
    w.to_profile()
    w.submit_profile()
    p = w.participant
    assert p.state == S.NO_RECOURSE and p.flagged and "no admissible" in p.flag_reason
    body = w.get().content.decode()
    assert "could not find an action plan" in body and p.completion_code in body
    assert p.recourses.count() == 0


def test_shortfall_is_flagged(transactional_db, eager) -> None:
    from recourse_engine import synth_pool

    pool = synth_pool(SCHEMA, n=200, seed=3)
    pool["income"] = 1_000_000
    pool.loc[:1, "income"] = 9_000_000  # exactly two admissible profiles
    study = make_study(slug="thin", pool=pool)
    w = start(Client(), study)
    w.to_profile()
    w.submit_profile()
    p = w.participant
    assert p.state == S.EVALUATING and p.recourses.count() == 2
    assert p.flagged and "only 2 of 5" in p.flag_reason


def test_recruitment_id_is_kept_and_resumes(study, eager) -> None:
    a = start(Client(), study, "?PROLIFIC_PID=abc123")
    b = start(Client(), study, "?PROLIFIC_PID=abc123")
    assert a.url == b.url
    assert a.participant.recruitment_id == "abc123"
    assert Participant.objects.count() == 1


def test_access_codes_are_long_and_distinct(study) -> None:
    codes = {start(Client(), study).participant.code for _ in range(20)}
    assert len(codes) == 20 and min(len(c) for c in codes) >= 22
