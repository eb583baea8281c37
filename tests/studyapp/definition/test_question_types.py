"""A question type is one entry of the table: a throwaway type added there alone is checked
in the settings, asked on the page, its answers checked, exported with a codebook entry and
answered by the bots through a whole study."""

from __future__ import annotations

import io
import zipfile
from typing import Any

import numpy as np
import pandas as pd
import pytest
from django import forms

from studyapp.definition.errors import ConfigError
from studyapp.definition.question_types import (
    QUESTION_TYPES,
    AnswerError,
    QuestionType,
    problem,
    researcher_types,
)
from studyapp.definition.questions import Question
from studyapp.export import export_zip_stream
from studyapp.models import Participant, Study
from studyapp.participation import questionnaire
from studyapp.participation.question_forms import question_fields
from studyapp.simulation.bots import Bot
from studyapp.studies import updates
from tests.studyapp.conftest import make_study


def _stars_check(q: Question) -> None:
    if q.points > 5:
        raise problem(f"at most 5 stars, not {q.points}", ".points")


def _stars_field(q: Question, language: str, required: bool) -> forms.Field:
    return forms.TypedChoiceField(
        label=q.label(language),
        choices=[(i, "*" * i) for i in range(1, q.points + 1)],
        coerce=int,
        required=required,
        widget=forms.RadioSelect,
    )


def _stars_answer(q: Question, value: Any) -> int:
    if str(value) not in [str(i) for i in range(1, q.points + 1)]:
        raise AnswerError(f"give 1 to {q.points} stars")
    return int(value)


def _stars_codebook(q: Question) -> tuple[str, str]:
    return "integer", f"1..{q.points} stars"


def _stars_bot(q: Question, rng: np.random.Generator, error_rate: float) -> str:
    return str(int(rng.integers(1, q.points + 1)))


STARS = QuestionType(
    "stars", _stars_check, _stars_field, _stars_answer, _stars_codebook, _stars_bot
)
ITEM = {"key": "rating", "page": "post", "type": "stars", "points": 4, "text": {"en": "Rate us"}}


@pytest.fixture
def stars(monkeypatch: pytest.MonkeyPatch) -> QuestionType:
    monkeypatch.setitem(QUESTION_TYPES, "stars", STARS)
    return STARS


def test_an_unknown_type_is_refused_until_the_table_has_it(transactional_db: Any) -> None:
    study = make_study(state="draft")
    with pytest.raises(ConfigError, match=r"questions\[0\]\.type: 'stars' is not one of"):
        updates.study_update(study=study, changes={"questions": [ITEM]})
    assert "stars" not in researcher_types()


def test_the_types_own_definition_check_names_its_path(stars: QuestionType, db: Any) -> None:
    study = make_study(state="draft")
    with pytest.raises(ConfigError) as err:
        updates.study_update(study=study, changes={"questions": [{**ITEM, "points": 6}]})
    assert err.value.problems == [("questions[0].points", "at most 5 stars, not 6")]


def test_a_throwaway_type_goes_through_a_whole_study(
    stars: QuestionType, eager: None, transactional_db: Any
) -> None:
    study = make_study(state="draft")
    updates.study_update(study=study, changes={"questions": [ITEM]})
    study.state = Study.State.LIVE
    study.save()

    # the page's field and the service's check are the type's
    (item,) = questionnaire.items_for(study, "post")
    field = question_fields([item], "en")["q__rating"]
    assert [label for _, label in field.choices] == ["*", "**", "***", "****"]
    with pytest.raises(AnswerError, match="Rate us: give 1 to 4 stars"):
        questionnaire.answers_check([item], {"rating": "9"})
    assert questionnaire.answers_check([item], {"rating": "3"}) == {"rating": 3}

    # the bots answer it through the real pages, to the end of the study
    results = [Bot(study, seed=s).run() for s in range(4)]
    assert sum(r.outcome == "completed" for r in results) >= 1
    done = Participant.objects.filter(study=study, state=Participant.State.COMPLETED)
    answers = [p.answers["rating"] for p in done]
    assert answers and all(1 <= a <= 4 for a in answers)

    # exported with the type's kind, and described by its codebook entry
    zf = zipfile.ZipFile(io.BytesIO(b"".join(export_zip_stream(study, with_test=True))))
    pa = pd.read_csv(zf.open("participants.csv"))
    cb = pd.read_csv(zf.open("codebook.csv")).set_index(["file", "column"])
    assert sorted(pa.loc[pa["state"] == "completed", "q_rating"]) == sorted(answers)
    assert cb.loc[("participants.csv", "q_rating"), "type"] == "integer"
    assert cb.loc[("participants.csv", "q_rating"), "allowed"] == "1..4 stars"
