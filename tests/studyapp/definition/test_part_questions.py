"""The matrix (statements rated on one scale) and ranking question types: their definition
checks name the path, bad answers are refused by the page and the service alike, the fields
are radio groups and rank selects, and bots take a study with both to an export that has a
column and a codebook entry per statement and per option."""

from __future__ import annotations

import io
import re
import zipfile
from typing import Any

import pandas as pd
import pytest
from django import forms
from django.test import Client
from django.utils import translation

from studyapp.definition.errors import ConfigError
from studyapp.definition.question_types import AnswerError
from studyapp.definition.study_config import questions_read
from studyapp.export import export_zip_stream
from studyapp.models import Participant, Study
from studyapp.participation import questionnaire
from studyapp.participation.forms import PAGE_RENDERER
from studyapp.participation.question_forms import question_fields
from studyapp.simulation.bots import Bot
from studyapp.studies import updates
from tests.studyapp.conftest import make_study, start

SCALE = ["Disagree", "Rather not", "Rather", "Agree"]
MATRIX = {
    "key": "trust", "page": "pre", "type": "matrix", "text": {"en": "How far do you agree?"},
    "options": {"en": SCALE}, "rows": {"en": ["It was fair", "It was clear"]},
    "row_keys": ["fair", "clear"],
}  # fmt: skip
RANKING = {
    "key": "wish", "page": "post", "type": "ranking", "text": {"en": "Order what matters"},
    "options": {"en": ["Price", "Speed", "Support"]}, "option_keys": ["price", "speed", "help"],
}  # fmt: skip


def _problems(*items: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as err:
        questions_read(list(items))
    return err.value.problems


@pytest.mark.parametrize(
    ("item", "path", "words"),
    [
        ({**MATRIX, "rows": {"en": []}, "row_keys": []}, "questions[0].rows.en", "statement"),
        ({**MATRIX, "options": {"en": []}}, "questions[0].options.en", "at least 2 options"),
        ({**MATRIX, "row_keys": ["fair"]}, "questions[0].row_keys", "1 keys for 2 statements"),
        ({**MATRIX, "row_keys": ["fair", "fair"]}, "questions[0].row_keys[1]", "duplicate"),
        ({**MATRIX, "row_keys": ["Fair", "b"]}, "questions[0].row_keys[0]", "lower-case"),
        ({**MATRIX, "rows": {"en": ["a", "b"], "ja": ["あ"]}}, "questions[0].rows.ja", "1 Japanese"),
        ({**RANKING, "options": {"en": ["Price"]}, "option_keys": ["price"]},
         "questions[0].options.en", "a ranking item needs at least 2 options"),
        ({**RANKING, "option_keys": ["price", "speed", "price"]},
         "questions[0].option_keys[2]", "duplicate key 'price'"),
        ({**RANKING, "option_keys": []}, "questions[0].option_keys", "0 keys for 3 options"),
    ],
)  # fmt: skip
def test_a_bad_definition_is_refused_with_its_path(item: dict, path: str, words: str) -> None:
    ((where, message),) = _problems(item)
    assert where == path and words in message, (where, message)


def test_a_part_column_taken_by_another_item_is_refused() -> None:
    other = {"key": "trust_fair", "page": "pre", "type": "text", "text": {"en": "Why?"}}
    assert _problems(MATRIX, other) == [
        ("questions[1].key", "export column q_trust_fair is taken by item 'trust'")
    ]


@pytest.mark.parametrize(
    ("item", "given", "message"),
    [
        (MATRIX, {"fair": "5"}, "Please choose one of the listed options."),
        (MATRIX, {"fair": "two"}, "Please choose one of the listed options."),
        (MATRIX, {"kind": "1"}, "Please choose one of the listed options."),
        (MATRIX, "3", "Please choose one of the listed options."),
        (MATRIX, {"fair": "2"}, "Please answer the question: How far do you agree?"),
        (RANKING, {"price": "1", "speed": "1", "help": "2"}, "rank 1 is given more than once"),
        (RANKING, {"price": "1", "speed": "2"}, "Please give every option a rank."),
        (RANKING, {"price": "1", "speed": "2", "help": "4"}, "a rank from 1 to 3"),
        (RANKING, {"price": "1", "speed": "2", "help": "x"}, "a rank from 1 to 3"),
    ],
)
def test_bad_answers_are_refused_by_the_service(item: dict, given: Any, message: str) -> None:
    (q,) = questions_read([item])
    with pytest.raises(AnswerError, match=re.escape(message)):
        questionnaire.answers_check([q], {q.key: given})


def test_good_answers_are_stored_as_a_value_per_part() -> None:
    matrix, ranking = questions_read([MATRIX, RANKING])
    answers = {"trust": {"fair": "4", "clear": "1"}, "wish": {"price": "2", "speed": "3",
                                                              "help": "1"}}  # fmt: skip
    assert questionnaire.answers_check([matrix, ranking], answers) == {
        "trust": {"fair": 4, "clear": 1},
        "wish": {"price": 2, "speed": 3, "help": 1},
    }
    optional, _ = questions_read([{**MATRIX, "required": False}, RANKING])
    assert questionnaire.answers_check([optional], {"trust": {"clear": "2"}}) == {
        "trust": {"clear": 2}
    }
    # a page that timed out keeps what was answered
    kept = questionnaire.answers_check([matrix], {"trust": {"fair": "2"}}, timed_out=True)
    assert kept == {"trust": {"fair": 2}}


def _form(items: list, data: dict | None = None) -> forms.Form:
    fields = question_fields(items, "en")
    return type("F", (forms.Form,), fields)(data, renderer=PAGE_RENDERER)


def test_the_matrix_is_a_radio_group_per_statement() -> None:
    (q,) = questions_read([MATRIX])
    html = _form([q])["q__trust"].as_field_group()
    rows = re.findall(r'<fieldset aria-describedby="([^"]+)"><legend>([^<]+)</legend>', html)
    assert [legend for _, legend in rows] == ["It was fair", "It was clear"]
    (described,) = {d for d, _ in rows}  # every row by the scale's two ends
    assert re.search(f'id="{described}">A scale from “Disagree” to “Agree”<', html)
    radios = re.findall(
        r'<label for="([^"]+)"><input type="radio" name="q__trust\.fair" value="(\d)" id="([^"]+)"',
        html,
    )
    assert [v for _, v, _ in radios] == ["1", "2", "3", "4"]
    assert all(for_ == id_ for for_, _, id_ in radios)
    assert html.count("<legend") == 3  # the question's own, and one per statement


def test_a_partly_answered_matrix_names_the_statements_left() -> None:
    (q,) = questions_read([MATRIX])
    form = _form([q], {"q__trust.fair": "2"})
    assert not form.is_valid()
    assert form.errors["q__trust"] == ["Please answer each of: It was clear"]
    html = form["q__trust"].as_field_group()
    assert html.count('aria-invalid="true"') == len(SCALE)  # the radios of the row left out
    assert 'value="2" id="id_q__trust_fair_1" checked' in html  # the answer given is kept


def test_the_ranking_is_a_rank_select_per_option() -> None:
    (q,) = questions_read([RANKING])
    form = _form([q], {"q__wish.price": "2", "q__wish.speed": "2", "q__wish.help": "1"})
    assert not form.is_valid()
    assert "rank 2 is given more than once" in form.errors["q__wish"][0]
    html = form["q__wish"].as_field_group()
    selects = re.findall(r'<label for="([^"]+)">([^<]+)</label>\s*<select name="q__wish\.(\w+)" '
                         r'id="([^"]+)" aria-describedby="([^"]+)"', html)  # fmt: skip
    assert [(label, key) for _, label, key, _, _ in selects] == [
        ("Price", "price"), ("Speed", "speed"), ("Support", "help")]  # fmt: skip
    assert all(for_ == id_ for for_, _, _, id_, _ in selects)
    assert "Give each option a rank from 1 (first) to 3, each rank once." in html
    assert html.count("<option value=") == 3 * 4  # a blank and ranks 1..3 per option
    assert "ranking.js" in html


def test_a_japanese_page_shows_the_japanese_statements_and_words() -> None:
    matrix, ranking = questions_read(
        [
            {**MATRIX, "text": {"en": "Agree?", "ja": "同意しますか。"},
             "options": {"en": ["No", "Yes"], "ja": ["いいえ", "はい"]},
             "rows": {"en": ["Fair", "Clear"], "ja": ["公平だった", "明確だった"]}},
            RANKING,  # no Japanese options: the English ones
        ]
    )  # fmt: skip
    with translation.override("ja"):
        fields = question_fields([matrix, ranking], "ja")
        form = type("F", (forms.Form,), fields)(renderer=PAGE_RENDERER)
        html = form.as_div()
    assert "<legend>公平だった</legend>" in html and "<span>はい</span>" in html
    assert "「いいえ」から「はい」までの尺度" in html
    assert "各選択肢に1（最上位）から3までの順位をつけてください。" in html
    assert 'data-up="Priceを上へ移動"' in html


def _study() -> Study:
    study = make_study(state="draft")
    updates.study_update(study=study, changes={"questions": [MATRIX, RANKING]})
    study.state = Study.State.LIVE
    study.save()
    return study


def test_a_bad_page_changes_nothing(transactional_db: Any, eager: None) -> None:
    study = _study()
    w = start(Client(), study)
    assert w.consent().status_code == 302
    assert w.screening().status_code == 302
    assert w.page() == "questions_pre"
    r = w.post({"page": "questions_pre", "q__trust.clear": "3"})
    assert r.status_code == 400 and "Please answer each of: It was fair" in r.content.decode()
    assert w.participant.answers in (None, {})
    r = w.post({"page": "questions_pre", "q__trust.clear": "3", "q__trust.fair": "1"})
    assert r.status_code == 302
    assert w.participant.answers == {"trust": {"fair": 1, "clear": 3}}


def test_bots_take_a_study_with_both_to_the_export(transactional_db: Any, eager: None) -> None:
    study = _study()
    results = [Bot(study, seed=s).run() for s in range(2)]
    assert sum(r.outcome == "completed" for r in results) >= 1
    done = Participant.objects.filter(study=study, state=Participant.State.COMPLETED)
    answers = {p.pk: p.answers for p in done}
    assert answers
    for given in answers.values():
        assert set(given["trust"]) == {"fair", "clear"}
        assert sorted(given["wish"].values()) == [1, 2, 3]

    zf = zipfile.ZipFile(io.BytesIO(b"".join(export_zip_stream(study, with_test=True))))
    pa = pd.read_csv(zf.open("participants.csv")).set_index("participant")
    for pk, given in answers.items():
        assert pa.loc[pk, "q_trust_fair"] == given["trust"]["fair"]
        assert pa.loc[pk, "q_trust_clear"] == given["trust"]["clear"]
        assert [pa.loc[pk, f"q_wish_{k}"] for k in ("price", "speed", "help")] == [
            given["wish"][k] for k in ("price", "speed", "help")
        ]
    assert "q_trust" not in pa.columns and "q_wish" not in pa.columns
    cb = pd.read_csv(zf.open("codebook.csv")).set_index(["file", "column"])
    fair = cb.loc[("participants.csv", "q_trust_fair")]
    assert fair["type"] == "integer"
    assert fair["allowed"] == "1=Disagree; 2=Rather not; 3=Rather; 4=Agree"
    assert fair["description"].startswith("How far do you agree? [It was fair] (matrix item")
    help_ = cb.loc[("participants.csv", "q_wish_help")]
    assert help_["type"] == "integer" and help_["allowed"].startswith("1..3 (1: ranked first")
    assert help_["description"].startswith("Order what matters [Support] (ranking item")
