"""Creating a study from a schema (or the built-in car-loan one), duplicating it, uploaded
decision models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from recourse_engine import (
    IncomeRule,
    carloan_schema,
    load_schema,
    pool_from_frame,
    save_model,
    synth_pool,
    train_sklearn_model,
)
from studyapp.definition import engine_objects
from studyapp.definition.errors import StudyError
from studyapp.generation import worker_cache
from studyapp.models import Condition, Quota, Study
from studyapp.studies import carloan, duplicate, pool, services, study_setup, updates
from tests.studyapp.console.conftest import pool_bytes, researcher


def test_create_from_builtin_schema_with_synthetic_pool(owner: Any) -> None:
    study = study_setup.study_create_from_schema(
        slug="cl", title="Car loan", schema=None, owner=owner, pool_size=200
    )
    assert study.state == Study.State.DRAFT and study.owner == owner
    assert study.schema_hash == carloan_schema().hash() and study.pool_rows == 200
    assert study.schema["translations"] == carloan.SCHEMA_TRANSLATIONS  # its Japanese labels
    assert study.texts["en"]["consent"] == carloan.TEXTS["consent"]
    assert study.texts["ja"]["consent"] == carloan.TEXTS_JA["consent"]
    assert study.consent_version == carloan.CONSENT_VERSION
    assert study.design == "sparsest:1,proximate:1,random:3"


def test_create_from_uploaded_schema_and_pool(owner: Any) -> None:
    schema = carloan_schema().to_dict()
    study = study_setup.study_create_from_schema(
        slug="up",
        title="Uploaded",
        schema=json.loads(json.dumps(schema)),
        owner=owner,
        pool=pool_bytes(80),
        settings={"design": "sparsest:2,random:1", "language": "ja",
                  "texts": {"en": {"consent": "Agree?"}}},
    )  # fmt: skip
    assert study.pool_rows == 80 and study.language == "ja"
    assert study.design == "sparsest:2,random:1" and study.texts == {"en": {"consent": "Agree?"}}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"slug": "has space"}, "slug 'has space'"),
        ({"title": " "}, "title: required"),
        ({"settings": {"design": "sparsest:1,proxmate:1"}}, "design[1]: unknown strategy"),
        ({"schema": {"name": "x", "profile_items": "nope"}}, "schema: "),
        ({"settings": {"language": "fr"}}, "language: 'fr' is not one of"),
        ({"settings": {"desing": "random:1"}}, "desing: unknown field"),
        ({"settings": {"conditions": [{"name": "a", "design": "nope:1"}]}},
         "conditions[0].design[0]: unknown strategy 'nope'"),
        ({"pool": b"id,income\n"}, "pool: missing column(s)"),
    ],
)  # fmt: skip
def test_bad_setup_creates_nothing(owner: Any, kwargs: dict[str, Any], message: str) -> None:
    args: dict[str, Any] = {"slug": "s1", "title": "T", "schema": None, "owner": owner}
    args.update(kwargs)
    if "pool" not in args:
        args["pool_size"] = 50
    with pytest.raises(StudyError) as exc:
        study_setup.study_create_from_schema(**args)
    assert message in str(exc.value)
    assert not Study.objects.exists()


def test_bad_pool_error_carries_the_preview(owner: Any) -> None:
    lines = pool_bytes(30).decode().splitlines()
    lines[2] = lines[2].replace(",", ",x", 1)  # the income cell of line 3
    with pytest.raises(pool.PoolRejected) as exc:
        study_setup.study_create_from_schema(
            slug="s2", title="T", schema=None, owner=owner, pool="\n".join(lines).encode()
        )
    assert [line for line, _ in exc.value.preview.rejected] == [3]
    assert "line 3: column 'income'" in str(exc.value)


def test_duplicate_slug_refused(owner: Any) -> None:
    study_setup.study_create_from_schema(
        slug="dup", title="T", schema=None, owner=owner, pool_size=50
    )
    with pytest.raises(StudyError, match="exists already"):
        study_setup.study_create_from_schema(
            slug="dup", title="T2", schema=None, owner=owner, pool_size=50
        )
    assert Study.objects.get(slug="dup").title == "T"


def test_duplicate_copies_setup_not_participants(owner: Any, eager: None) -> None:
    from tests.studyapp.console.conftest import complete

    other = researcher("other")
    src = study_setup.study_create_from_schema(
        slug="src", title="Source", schema=None, owner=owner, pool_size=300
    )
    src.outcome_codes["completed"]["redirect_url"] = (
        "https://panel.example/done?cc=" + src.outcome_codes["completed"]["code"]
    )
    src.attention_checks = [{"key": "ac1", "options": ["a", "b"], "correct": 2}]
    src.attention_max_failures = 1
    src.panel_param = "PANEL_ID"
    src.save()
    src.shared_with.add(other)
    a = Condition.objects.create(study=src, name="distance", design="sparsest:1", position=0)
    Condition.objects.create(study=src, name="balanced", design="random:1", position=1)
    Quota.objects.create(study=src, condition=a, limit=10)
    Quota.objects.create(study=src, screening_key="gender", screening_value="1", limit=5)
    services.study_set_state(study=src, state=Study.State.LIVE)
    complete(src, 1)

    copy = duplicate.study_duplicate(study=src, slug="src-2", owner=other)
    assert copy.state == Study.State.DRAFT and copy.owner == other
    assert copy.participants.count() == 0 and src.participants.count() == 1
    assert list(copy.shared_with.all()) == []
    for field in ("schema", "schema_hash", "texts", "design", "pool_csv", "pool_hash",
                  "pool_rows", "decision_model", "attention_checks", "attention_max_failures",
                  "panel_param", "language", "consent_version", "seed"):  # fmt: skip
        assert getattr(copy, field) == getattr(src, field), field
    for outcome, entry in copy.outcome_codes.items():
        assert entry["code"] != src.outcome_codes[outcome]["code"]
    done = copy.outcome_codes["completed"]
    assert done["redirect_url"] == "https://panel.example/done?cc=" + done["code"]
    assert [(c.name, c.design) for c in copy.conditions.all()] == [
        ("distance", "sparsest:1"),
        ("balanced", "random:1"),
    ]
    quotas = sorted(
        (q.condition.name if q.condition else "", q.screening_key, q.limit)
        for q in copy.quotas.all()
    )
    assert quotas == [("", "gender", 5), ("distance", "", 10)]
    assert all(q.condition is None or q.condition.study_id == copy.pk for q in copy.quotas.all())
    with pytest.raises(StudyError, match="exists already"):
        duplicate.study_duplicate(study=src, slug="src-2", owner=other)


def test_uploaded_model_checked_against_schema(owner: Any, tmp_path: Path) -> None:
    schema = carloan_schema()
    study = study_setup.study_create_from_schema(
        slug="m", title="T", schema=None, owner=owner, pool_size=300
    )
    frame = synth_pool(schema, n=300, seed=2)
    frame["approved"] = (frame["income"] > frame["income"].median()).astype(int)
    model = train_sklearn_model(
        schema, pool_from_frame(frame, schema), label="approved", kind="logistic"
    )
    path = save_model(model, tmp_path / "m.joblib")
    updates.study_set_decision_model(study=study, name="uploaded", blob=path.read_bytes())
    study.refresh_from_db()
    assert study.decision_model == "uploaded"
    loaded = engine_objects.study_model(study)
    assert loaded.schema_hash == schema.hash()
    _, index = worker_cache.pool_index_for(study)
    assert index is not None

    other = schema.to_dict()
    other["profile_items"] = other["profile_items"][:-1]
    other_schema = load_schema(other)
    frame2 = synth_pool(schema, n=300, seed=2).drop(columns=[schema.keys[-1]])
    frame2["approved"] = frame["approved"]
    wrong = save_model(
        train_sklearn_model(
            other_schema, pool_from_frame(frame2, other_schema), label="approved", kind="logistic"
        ),
        tmp_path / "w.joblib",
    )
    with pytest.raises(StudyError, match="trained on schema"):
        updates.study_set_decision_model(study=study, name="uploaded", blob=wrong.read_bytes())
    with pytest.raises(StudyError, match="not a saved decision model"):
        updates.study_set_decision_model(study=study, name="uploaded", blob=b"junk")
    study.refresh_from_db()
    assert study.decision_model_blob == path.read_bytes()  # the good upload is kept
    rule = save_model(IncomeRule(), tmp_path / "r.joblib")
    updates.study_set_decision_model(study=study, name="uploaded", blob=rule.read_bytes())
    updates.study_set_decision_model(study=study, name="income_rule")
    study.refresh_from_db()
    assert study.decision_model == "income_rule" and study.decision_model_blob is None
