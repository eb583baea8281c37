"""Pool-collection studies: bots answer the survey; their answers become another study's pool
after the preview, non-disclosers and failed attention checks left out."""

from __future__ import annotations

import io
from typing import Any

import pandas as pd
import pytest
from django.core.management import call_command
from django.test import Client

from studyapp.export import tables
from studyapp.models import Participant, Study
from studyapp.studies import carloan, pool_collection, services
from tests.studyapp.conftest import ELIGIBLE, PROFILE, make_study, start

S = Participant.State


def _jpy(label: str) -> float:
    """The survey's band labels by hand: '-2M' is 0..2M, 'aM-bM' the midpoint, '20M-' 20M."""
    if label == "-2M":
        return 1_000_000.0
    if label == "20M-":
        return 20_000_000.0
    lo, hi = (float(x.rstrip("M")) for x in label.split("-"))
    return (lo + hi) / 2 * 1_000_000.0


@pytest.fixture
def survey(transactional_db: Any) -> Study:
    study = pool_collection.pool_collection_study_create(
        slug="survey", title="Profile survey", schema=carloan.carloan_schema_dict()
    )
    return services.study_set_state(study=study, state=Study.State.LIVE)


def test_the_survey_asks_profile_and_income_and_nothing_about_recourse(survey: Study) -> None:
    income = next(q for q in survey.schema["screening"] if q["key"] == "income")
    assert len(income["options"]) == 21 and income["options"][-1] == "Prefer not to say"
    assert [q["key"] for q in survey.schema["screening"]] == ["age", "gender", "income"]
    walker = start(Client(), survey)
    answers = {"age": "40", "gender": "2", "income": "21"}
    assert walker.screening(answers).status_code == 302
    assert walker.page() == "profile"  # no scenario
    assert walker.submit_profile().status_code == 302
    p = walker.participant
    assert p.state == S.COMPLETED and p.generation == "" and p.recourses.count() == 0
    assert p.income_band == "Prefer not to say" and p.income_jpy is None
    assert p.completion_code == survey.outcome_codes["completed"]["code"]
    assert p.completion_code in walker.get().content.decode()
    row = tables.participants_frame(survey).iloc[0]
    assert (row["outcome"], row["decision"], row["income_band"]) == (
        "completed", "", "Prefer not to say"
    )  # fmt: skip
    assert pd.isna(row["income"]) and row["n_evaluations"] == 0


def test_bot_answers_become_another_studys_pool_after_the_preview(survey: Study) -> None:
    call_command(
        "simulate_participants", "survey", "--n", "30", "--seed", "5", stdout=io.StringIO()
    )
    people = list(Participant.objects.filter(study=survey))
    assert len(people) == 30 and {p.state for p in people} == {S.COMPLETED}
    hidden = {p.pk for p in people if p.income_band == "Prefer not to say"}
    assert 0 < len(hidden) < 30
    # one more answer, flagged for failing an attention check (FLAG rule), is left out too
    flagged = people[0] if people[0].pk not in hidden else people[1]
    Participant.objects.filter(pk=flagged.pk).update(attention_failures=1)

    target = make_study(slug="target", state="draft")
    before = (target.pool_csv, target.pool_rows)
    preview, collected = pool_collection.pool_from_collection_preview(
        target=target, source=survey, with_test=True
    )
    included = [p for p in people if p.pk not in hidden and p.pk != flagged.pk]
    assert collected.counts == {
        "completed": 30, "failed_attention": 1, "not_disclosed": len(hidden),
        "included": len(included),
    }  # fmt: skip
    assert preview.ok and preview.rows == len(included)
    target.refresh_from_db()
    assert (target.pool_csv, target.pool_rows) == before  # a preview stores nothing

    with pytest.raises(pool_collection.PoolCollectionError, match="changed since the preview"):
        pool_collection.study_pool_from_collection(
            target=target, source=survey, sha256="0" * 64, with_test=True
        )
    target.refresh_from_db()
    assert (target.pool_csv, target.pool_rows) == before

    pool_collection.study_pool_from_collection(
        target=target, source=survey, sha256=collected.sha256, with_test=True
    )
    target.refresh_from_db()
    pool = pd.read_csv(io.StringIO(target.pool_csv))
    assert target.pool_rows == len(included) == len(pool)
    by_id = {f"survey-{p.pk}": p for p in included}
    assert set(pool["id"].astype(str)) == set(by_id)
    for _, row in pool.iterrows():
        p = by_id[str(row["id"])]
        assert row["income"] == _jpy(p.income_band)
        assert {k: int(row[k]) for k in PROFILE} == {k: int(v) for k, v in p.profile.values.items()}


def test_without_test_participants_there_is_nothing_to_take(survey: Study) -> None:
    call_command("simulate_participants", "survey", "--n", "2", "--seed", "1", stdout=io.StringIO())
    target = make_study(slug="target", state="draft")
    with pytest.raises(pool_collection.PoolCollectionError, match="no completed answer"):
        pool_collection.pool_from_collection_preview(target=target, source=survey)


def test_a_study_without_an_income_item_cannot_collect_a_pool(transactional_db: Any) -> None:
    schema = carloan.carloan_schema_dict()
    schema["screening"] = [q for q in schema["screening"] if q["key"] != "income"]
    study = services.study_create_from_schema(
        slug="noincome", title="No income", schema=schema, owner=None, pool_size=10
    )
    before = Study.objects.values().get(pk=study.pk)
    with pytest.raises(pool_collection.PoolCollectionError, match="needs an income item"):
        pool_collection.study_make_pool_collection(study=study)
    assert Study.objects.values().get(pk=study.pk) == before
    # an income item without a "prefer not to say" answer is refused too
    with_income = make_study(slug="carloan10", state="draft")
    with pytest.raises(pool_collection.PoolCollectionError, match="prefer not to say"):
        pool_collection.study_make_pool_collection(study=with_income)
    assert Study.objects.get(pk=with_income.pk).kind == "recourse"


def test_screening_answers_of_the_reference_study_still_give_jpy(transactional_db: Any) -> None:
    study = make_study(slug="plain")
    walker = start(Client(), study)
    walker.screening(ELIGIBLE)
    assert walker.participant.income_jpy == 3_500_000.0
