"""Survey logic as settings (`definition.logic`): each bad condition or piped answer refused
with a path-named message and nothing stored; conditions evaluated as written; answers
piped as the participant gave them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from recourse_engine import carloan_schema
from studyapp.definition import logic
from studyapp.definition.errors import ConfigError
from studyapp.definition.screening import questions as screening_questions
from studyapp.definition.study_config import config_validate, placeholders
from studyapp.models import Study
from studyapp.studies import updates

SCHEMA = carloan_schema()
SCREENING = screening_questions({"screening": SCHEMA.to_dict()["screening"]})


def q(key: str, page: str, type_: str, **extra: Any) -> dict[str, Any]:
    return {"key": key, "page": page, "type": type_, "text": {"en": f"{key}?"}, **extra}


def when(question: str, op: str = "equals", value: Any = None, **extra: Any) -> dict[str, Any]:
    clause = {"question": question, "op": op, **extra}
    return {"all": [clause if value is None else {**clause, "value": value}]}


YES_NO = {"en": ["Yes", "No"]}
CAR = q("car", "pre", "single", options=YES_NO)
NAME = q("name", "pre", "text")
KM = q("km", "post", "number", min=0, max=1000)


def _validate(questions: list[dict[str, Any]], texts: dict | None = None) -> Any:
    data = {**placeholders(["title", "outcome_codes"]), "questions": questions}
    if texts is not None:
        data["texts"] = texts
    return config_validate(data, screening=SCREENING, schema=SCHEMA)


#: bad settings, each with the path and the message it is refused with (a data file: the
#: cases are alike in shape)
BAD = [
    pytest.param(c["questions"], c.get("texts"), c["path"], c["message"], id=c["id"])
    for c in json.loads((Path(__file__).parent / "bad_logic.json").read_text())
]


@pytest.mark.parametrize(("questions", "texts", "path", "message"), BAD)
def test_bad_logic_is_refused_with_its_path(
    questions: list, texts: dict | None, path: str, message: str
) -> None:
    with pytest.raises(ConfigError) as exc:
        _validate(questions, texts)
    problems = dict(exc.value.problems)
    assert path in problems, exc.value.problems
    if "is not one of" in message:  # pydantic's words for a literal (its quotes vary)
        assert "'withdrawn'" in problems[path]
    else:
        assert problems[path] == message


def test_a_refused_change_stores_nothing(transactional_db: Any) -> None:
    from tests.studyapp.conftest import make_study

    study = make_study(state="draft")
    updates.study_update(study=study, changes={"questions": [CAR, KM]})
    before = Study.objects.get(pk=study.pk).questions
    bad = [{**CAR, "show_if": when("q.km", ">", 10)}, KM]
    with pytest.raises(ConfigError, match=r"questions\[0\]\.show_if\.all\[0\]\.question"):
        updates.study_update(study=study, changes={"questions": bad})
    assert Study.objects.get(pk=study.pk).questions == before


def test_good_logic_is_read_as_its_answers_kind() -> None:
    """The console's editor sends every value as text: a choice's "1" becomes the code 1,
    a number's "30.5" a number; a text question keeps its text."""
    cfg = _validate(
        [
            CAR,
            NAME,
            {**q("why", "pre", "text"), "show_if": when("screening.age", "<", "30.5")},
            {
                **KM,
                "show_if": {
                    "any": [
                        {"question": "q.car", "op": "in", "values": ["1"]},
                        {"question": "q.name", "value": "Ann"},
                    ]
                },
                "text": {"en": "{q.car}: {profile.position}, {screening.income}"},
            },
            {**CAR, "key": "stop", "end_if": when("q.stop", value="2"), "page": "post"},
        ]  # fmt: skip
    )
    km = cfg.questions[3]
    assert km.show_if.any[0].values == [1] and km.show_if.any[1].value == "Ann"
    assert cfg.questions[2].show_if.all[0].value == 30.5
    assert (
        cfg.questions[4].end_if.all[0].value == 2 and cfg.questions[4].ends_with == "screened_out"
    )
    assert cfg.stored()["questions"][3]["show_if"]["any"][0]["values"] == [1]


# --- evaluation ------------------------------------------------------------------------------
def _condition(data: dict[str, Any]) -> logic.Condition:
    return logic.Condition.model_validate(data)


@pytest.mark.parametrize(
    ("condition", "answers", "met"),
    [
        (when("q.car", value=1), {"q.car": 1}, True),
        (when("q.car", value=1), {"q.car": 2}, False),
        (when("q.car", value=1), {}, False),  # not answered: meets nothing
        (when("q.car", "not_equals", 1), {}, False),
        (when("q.car", "not_equals", 1), {"q.car": 2}, True),
        (when("q.km", ">=", 10), {"q.km": 10}, True),
        (when("q.km", ">", 10), {"q.km": 10}, False),
        (when("q.km", "<", 10.5), {"q.km": 10}, True),
        (when("q.km", "<=", 9), {"q.km": 10}, False),
        (when("q.km", "in", values=[1, 10]), {"q.km": 10.0}, True),
        (when("q.tools", value=2), {"q.tools": [1, 2]}, True),  # a multi: 2 among those chosen
        (when("q.tools", "not_equals", 2), {"q.tools": [1, 2]}, False),
        (when("q.tools", "in", values=[3, 4]), {"q.tools": [1, 2]}, False),
        (when("q.name", value="ann"), {"q.name": " Ann "}, True),  # case and spaces ignored
        (when("q.name", "in", values=["Bo", "Cy"]), {"q.name": "Ann"}, False),
        (when("screening.age", "<", "30"), {"screening.age": 29}, True),  # unchecked text
        (
            {
                "all": [{"question": "q.car", "value": 1}],
                "any": [
                    {"question": "q.km", "op": ">", "value": 5},
                    {"question": "q.name", "value": "x"},
                ],
            },
            {"q.car": 1, "q.km": 3, "q.name": "X"},
            True,
        ),  # fmt: skip
        (
            {
                "all": [{"question": "q.car", "value": 1}],
                "any": [{"question": "q.km", "op": ">", "value": 5}],
            },
            {"q.car": 1, "q.km": 3},
            False,
        ),  # fmt: skip
        ({}, {}, True),  # no condition: always
    ],
)
def test_conditions_are_evaluated_as_written(
    condition: dict[str, Any], answers: dict[str, Any], met: bool
) -> None:
    assert logic.is_met(_condition(condition), answers) is met


def test_the_first_shown_screener_met_gives_the_ending() -> None:
    cfg = _validate(
        [
            {**CAR, "end_if": when("q.car", value=2)},
            {**NAME, "end_if": when("q.name", value="bot"), "ends_with": "failed_attention"},
        ]
    )
    car, name = cfg.questions
    assert logic.ending([car, name], {"q.car": 1, "q.name": "Ann"}) is None
    assert logic.ending([car, name], {"q.car": 1, "q.name": "BOT"}) == "failed_attention"
    assert logic.ending([car, name], {"q.car": 2, "q.name": "bot"}) == "screened_out"
    assert logic.ending([name], {"q.car": 2, "q.name": "Ann"}) is None  # car was hidden


def test_answers_are_piped_as_the_participant_reads_them() -> None:
    cfg = _validate([CAR, {**KM, "text": {"en": "You said {q.car}; {profile.position}?"}}])
    table = logic.sources(cfg.questions, screening=SCREENING, items=SCHEMA.items)
    position = SCHEMA.item("position")
    answers = {"q.car": 2, "profile.position": 3, "q.km": 12.0, "screening.loans": [1, 3]}
    text = "{q.car}, {profile.position}, {q.km} km, {screening.loans}, {q.missing}, {n_plans}"
    assert logic.pipe(text, answers, table) == (
        f"No, {position.options[2]}, 12 km, "
        f"{SCREENING[5]['options'][0]}, {SCREENING[5]['options'][2]}, {{q.missing}}, {{n_plans}}"
    )
    assert logic.pipe("{q.car}!", {}, table) == "!"  # not answered: nothing


def test_a_condition_in_words() -> None:
    cfg = _validate(
        [
            CAR,
            NAME,
            {
                **KM,
                "show_if": {
                    "all": [{"question": "q.car", "value": 1}],
                    "any": [
                        {"question": "q.name", "value": "a"},
                        {"question": "screening.age", "op": ">=", "value": 30},
                    ],
                },
            },
        ]  # fmt: skip
    )
    table = logic.sources(cfg.questions, screening=SCREENING, items=SCHEMA.items)
    assert logic.rules_in_words(cfg.questions[2], table) == [
        "shown only when q.car is 1 (Yes) and (q.name is 'a' or screening.age is at least 30)"
    ]
