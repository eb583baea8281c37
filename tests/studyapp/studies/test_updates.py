"""Setting changes through `updates.study_update`: all or nothing, draft-only ones on a draft
only, checked as the whole configuration after the change, and a stored value from before
the rules were this strict blocks only a change to itself."""

from __future__ import annotations

from typing import Any

import pytest

from studyapp.definition.errors import ConfigError, StudyFrozen
from studyapp.models import Study
from studyapp.studies import carloan, services, updates


@pytest.fixture
def draft(owner: Any) -> Study:
    return carloan.carloan_study_create(slug="d", title="Draft", owner=owner, pool_size=60)


def _rows(study: Study) -> tuple:
    study.refresh_from_db()
    return (
        study.title,
        study.schema,
        study.outcome_codes,
        list(study.conditions.values_list("name", "design", "position")),
        list(study.quotas.values_list("condition__name", "screening_key", "limit")),
    )


def test_changes_are_written_where_each_setting_lives(draft: Study) -> None:
    old_codes = dict(draft.outcome_codes)
    updates.study_update(
        study=draft,
        changes={
            "eligibility": {"occupation": [1], "loans": []},
            "conditions": [{"name": "x", "design": "random:2"}, {"name": "y"}],
            "quotas": [{"condition": "y", "limit": 5},
                       {"screening_key": "gender", "screening_value": "2", "limit": 8}],
            "outcome_codes": {"completed": {"redirect_url": "https://panel.example/c"}},
        },
    )  # fmt: skip
    draft.refresh_from_db()
    screening = {q["key"]: q for q in draft.schema["screening"]}
    assert screening["occupation"]["eligible"] == [1]
    assert "eligible_only" not in screening["loans"]  # none ticked: everyone
    assert list(draft.conditions.values_list("name", "design", "position")) == [
        ("x", "random:2", 0),
        ("y", "", 1),
    ]
    assert updates.study_config(draft)["quotas"] == [
        {"condition": "y", "screening_key": "", "screening_value": "", "limit": 5},
        {"condition": "", "screening_key": "gender", "screening_value": "2", "limit": 8},
    ]
    assert draft.outcome_codes["completed"] == {
        "code": old_codes["completed"]["code"],
        "redirect_url": "https://panel.example/c",
    }
    assert draft.outcome_codes["withdrew"] == old_codes["withdrew"]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"title": "New", "design": "random:1,proxmate:1"}, "design[1]: unknown strategy"),
        ({"title": "New", "quotas": [{"condition": "nope", "limit": 1}]},
         "quotas[0].condition: no condition named 'nope'"),
        ({"title": "New", "eligibility": {"gender": [4]}}, "eligibility.gender[0]: 4 is not"),
        ({"title": "New", "state": "live"}, "state: unknown field"),
    ],
)  # fmt: skip
def test_a_bad_change_changes_nothing(draft: Study, changes: dict, message: str) -> None:
    before = _rows(draft)
    with pytest.raises(ConfigError) as exc:
        updates.study_update(study=draft, changes=changes)
    assert any(m.startswith(message) for m in exc.value.messages), exc.value.messages
    assert _rows(draft) == before


def test_draft_only_settings_freeze_once_live(draft: Study) -> None:
    services.study_set_state(study=draft, state=Study.State.LIVE)
    before = _rows(draft)
    with pytest.raises(StudyFrozen, match="design, texts are frozen"):
        updates.study_update(study=draft, changes={"title": "T", "design": "random:1",
                                                   "texts": {}})  # fmt: skip
    assert _rows(draft) == before
    updates.study_update(study=draft, changes={"quotas": [{"limit": 30}], "title": "Live"})
    assert draft.title == "Live" and draft.quotas.get().limit == 30


def test_a_stale_stored_value_blocks_only_a_change_to_itself(draft: Study) -> None:
    Study.objects.filter(pk=draft.pk).update(
        texts={"en": {"consent": "Agree?", "old_key": "kept"}},
        attention_checks=[{"key": "ac1", "options": ["a", "b"], "correct": 2}],
    )
    draft.refresh_from_db()
    updates.study_update(study=draft, changes={"title": "Renamed", "seed": 4})
    draft.refresh_from_db()
    assert (draft.title, draft.seed) == ("Renamed", 4)
    assert draft.texts["en"]["old_key"] == "kept"  # not rewritten
    with pytest.raises(ConfigError, match=r"texts\.en\.old_key: unknown field"):
        updates.study_update(study=draft, changes={"texts": draft.texts})
    with pytest.raises(ConfigError, match=r"attention_checks\[0\]\.correct: unknown field"):
        updates.study_update(study=draft, changes={"attention_checks": draft.attention_checks})


def test_new_conditions_need_valid_quotas(draft: Study) -> None:
    from studyapp.models import Quota

    Quota.objects.create(study=draft, limit=0)  # refused by today's rules
    updates.study_update(study=draft, changes={"title": "Renamed"})
    with pytest.raises(ConfigError, match=r"quotas\[0\]\.limit: Input should be greater"):
        updates.study_update(study=draft, changes={"conditions": [{"name": "a"}]})
    assert draft.quotas.get().limit == 0 and not draft.conditions.exists()


def test_sharing_follows_the_list(draft: Study, owner: Any) -> None:
    from tests.studyapp.console.conftest import researcher

    a, b = researcher("a"), researcher("b")
    updates.study_set_shared_with(study=draft, users=[a, b, owner])
    assert sorted(u.username for u in draft.shared_with.all()) == ["a", "b"]
    updates.study_set_shared_with(study=draft, users=[b])
    assert [u.username for u in draft.shared_with.all()] == ["b"]
