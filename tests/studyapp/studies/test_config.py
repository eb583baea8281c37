"""The study configuration model: every problem named by its path, the design's failing part
by its index (weights in brackets do not split parts), unknown keys refused by name, the
rules that need the study (screening questions, a stored model file), and the editor's
schema drawn from the same model."""

from __future__ import annotations

from typing import Any

import pytest

from recourse_engine import carloan_schema
from studyapp.definition import screening, study_config
from studyapp.definition.errors import ConfigError
from studyapp.definition.json_schema import editor_schema, setting_json_schema
from studyapp.models import CODED, default_outcome_codes
from studyapp.studies import updates

QUESTIONS = screening.questions(carloan_schema().to_dict())
BLUE = {"key": "blue", "prompt": "Choose Blue.", "options": ["Red", "Blue"], "answer": 2,
        "page": "profile"}  # fmt: skip


def _check(**settings: Any) -> study_config.StudyConfig:
    data = {"title": "T", "outcome_codes": default_outcome_codes(), **settings}
    return study_config.config_validate(data, screening=QUESTIONS, has_model_blob=False)


def _problems(**settings: Any) -> list[str]:
    with pytest.raises(ConfigError) as exc:
        _check(**settings)
    return exc.value.messages


def test_a_valid_configuration_is_normalised() -> None:
    cfg = _check(
        design="sparsest:1, random:2",
        texts={"en": {"consent": "Agree?", "welcome": "  "}, "ja": {"welcome": ""}},
        attention_checks=[{**BLUE, "prompt": "  Choose Blue.  "}],
        eligibility={"occupation": [2, 1, 2], "gender": []},
        conditions=[{"name": "a"}, {"name": "b", "design": "random:1"}],
        quotas=[{"condition": "b", "limit": 3}, {"screening_key": "gender",
                                                   "screening_value": "Female", "limit": 2}],
    )  # fmt: skip
    stored = cfg.stored()
    assert stored["design"] == "sparsest:1,random:2"
    assert stored["texts"] == {"en": {"consent": "Agree?"}}  # blanks fall back, not stored
    assert stored["attention_checks"] == [{**BLUE, "prompt": "Choose Blue."}]
    assert stored["eligibility"] == {"occupation": [1, 2]}
    assert stored["conditions"] == [
        {"name": "a", "design": ""},
        {"name": "b", "design": "random:1"},
    ]


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"design": "sparsest:1,proxmate:1"}, "design[1]: unknown strategy 'proxmate'"),
        # the weights' commas are inside brackets: the failing part is still the second one
        ({"design": "lowest_cost@weighted[1,0.5,0,0]:1,proxmate:2"},
         "design[1]: unknown strategy 'proxmate'"),
        ({"design": "random:1,lowest_cost@weighted[1,0.5]:1"}, "design[1]: weighted takes"),
        ({"design": "random:0"}, "design[0]: k must be a positive integer"),
        ({"conditions": [{"name": "a"}, {"name": "b", "design": "x:1,nope:1"}]},
         "conditions[1].design[0]: unknown strategy 'x'"),
        ({"conditions": [{"name": "a"}, {"name": "a"}]},
         "conditions[1].name: duplicate condition name 'a'"),
        ({"texts": {"ja": {"consent": "x", "consnet": "y"}}}, "texts.ja.consnet: unknown field"),
        ({"texts": {"fr": {}}}, "texts.fr: unknown field; expected one of: en, ja"),
        ({"texts": {"en": {"consent": 3}}}, "texts.en.consent: expected a text"),
        ({"attention_checks": [{**BLUE, "answer": 3}]},
         "attention_checks[0].answer: 3 is not an option (1..2)"),
        ({"attention_checks": [BLUE, {**BLUE, "page": "evaluation-2"}]},
         "attention_checks[1].key: duplicate key 'blue'"),
        ({"attention_checks": [{**BLUE, "answer": "2"}]},
         "attention_checks[0].answer: expected a whole number"),
        ({"attention_checks": [{**BLUE, "colour": "red"}]},
         "attention_checks[0].colour: unknown field; expected one of: key, prompt, options"),
        ({"outcome_codes": {**default_outcome_codes(), "extra": {"code": "X"}}},
         "outcome_codes.extra: unknown field"),
        ({"outcome_codes": {**default_outcome_codes(),
                            "withdrew": {"code": "X", "redirect_url": "ftp://panel/x"}}},
         "outcome_codes.withdrew.redirect_url: 'ftp://panel/x' is not an http(s) URL"),
        ({"outcome_codes": {**default_outcome_codes(), "completed": {"code": "a b"}}},
         "outcome_codes.completed.code: 'a b': use 1-40 letters, digits, '-' or '_'"),
        ({"quotas": [{"condition": "zz", "limit": 3}]},
         "quotas[0].condition: no condition named 'zz'"),
        ({"quotas": [{"screening_key": "colour", "screening_value": "1", "limit": 3}]},
         "quotas[0].screening_key: 'colour' is not a screening question"),
        ({"quotas": [{"screening_key": "gender", "screening_value": "9", "limit": 3}]},
         "quotas[0].screening_value: '9' for 'gender': an option code 1..3 or its label"),
        ({"quotas": [{"screening_key": "gender", "limit": 3}]},
         "quotas[0]: a screening quota needs both the question key and the value"),
        ({"eligibility": {"occupation": [1, 12]}}, "eligibility.occupation[1]: 12 is not an option"),
        ({"eligibility": {"age": [1]}}, "eligibility.age: not a choice question"),
        ({"decision_model": "uploaded"}, "decision_model: 'uploaded': no model file stored"),
        ({"language": "fr"}, "language: 'fr' is not one of 'en' or 'ja'"),
        ({"title": "  "}, "title: required"),
        ({"title": "a\x00b"}, "title: contains a NUL character"),
        ({"panel_param": "1abc"}, "panel_param: '1abc': a URL parameter name"),
        ({"assignment_timeout_minutes": 0}, "assignment_timeout_minutes: Input should be greater"),
        ({"desing": "random:1"}, "desing: unknown field; expected one of: title, language"),
    ],
)  # fmt: skip
def test_problems_are_named_by_their_path(settings: dict[str, Any], message: str) -> None:
    problems = _problems(**settings)
    assert any(p.startswith(message) for p in problems), problems


def test_every_problem_is_reported_at_once() -> None:
    problems = _problems(design="nope:1", seed=-1, attention_rule="ignore")
    heads = sorted(p.split(":", 1)[0] for p in problems)
    assert heads == ["attention_rule", "design[0]", "seed"], problems


def test_problems_group_under_their_setting() -> None:
    with pytest.raises(ConfigError) as exc:
        _check(design="nope:1", texts={"ja": {"x": ""}}, quotas=[{"condition": "q", "limit": 1}])
    fields = exc.value.by_field()
    assert set(fields) == {"design", "texts"}  # the quota rule runs once the fields are valid
    assert fields["texts"] == ["texts.ja.x: unknown field; expected one of: " + ", ".join(
        study_config.TEXT_KEYS)]  # fmt: skip


def test_context_rules_only_with_the_study() -> None:
    data = {"title": "T", "outcome_codes": default_outcome_codes(), "decision_model": "uploaded",
            "eligibility": {"anything": [1]}}  # fmt: skip
    assert study_config.config_validate(data).decision_model == "uploaded"
    with pytest.raises(ConfigError, match="no model file stored"):
        study_config.config_validate(data, has_model_blob=False)
    assert study_config.config_validate({**data, "eligibility": {}}, has_model_blob=True)


def test_every_setting_is_either_draft_only_or_always() -> None:
    assert sorted(updates.DRAFT_ONLY + updates.ALWAYS) == sorted(study_config.SETTINGS)
    assert not set(updates.DRAFT_ONLY) & set(updates.ALWAYS)
    assert tuple(study_config.OutcomeCodes.model_fields) == CODED


def test_the_editor_schema_is_the_models() -> None:
    texts = editor_schema("texts")
    assert list(texts["properties"]) == list(study_config.LANGUAGES)
    assert tuple(texts["properties"]["ja"]["properties"]) == study_config.TEXT_KEYS
    assert texts["properties"]["ja"]["properties"]["consent"]["widget"] == "textarea"
    codes = editor_schema("outcome_codes")
    assert tuple(codes["properties"]) == CODED
    assert codes["properties"]["completed"]["required"] == ["code"]
    checks = editor_schema("attention_checks")
    assert checks["type"] == "array"
    assert list(checks["items"]["properties"]) == [
        "key", "prompt", "options", "answer", "page", "translations",
    ]  # fmt: skip
    quotas = editor_schema("quotas")["items"]
    assert quotas["properties"]["limit"]["minimum"] == 1
    assert "$ref" not in str(setting_json_schema("conditions"))
