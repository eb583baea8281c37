"""Migration 0012: a study made before a study had several languages runs in its one
language, and its participants took it in that language."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("studyapp", "0001_squashed_0011_approved_branch_decision_page")]
AFTER = [("studyapp", "0012_study_languages")]


@pytest.mark.django_db(transaction=True)
def test_existing_studies_and_participants_keep_their_language() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    try:
        old = executor.loader.project_state(BEFORE).apps
        Study, Participant = (
            old.get_model("studyapp", "Study"),
            old.get_model("studyapp", "Participant"),
        )
        common = {"schema": {}, "schema_hash": "x", "design": "random:1", "pool_csv": "",
                  "pool_hash": "x", "outcome_codes": {}}  # fmt: skip
        ja = Study.objects.create(slug="old-ja", title="Old", language="ja", **common)
        en = Study.objects.create(slug="old-en", title="Old", language="en", **common)
        Participant.objects.create(study=ja, code="a")
        Participant.objects.create(study=en, code="b")
        executor = MigrationExecutor(connection)
        executor.migrate(AFTER)
        new = executor.loader.project_state(AFTER).apps
        Study, Participant = (
            new.get_model("studyapp", "Study"),
            new.get_model("studyapp", "Participant"),
        )
        assert dict(Study.objects.values_list("slug", "languages")) == {
            "old-ja": ["ja"],
            "old-en": ["en"],
        }
        assert dict(Participant.objects.values_list("code", "language")) == {"a": "ja", "b": "en"}
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
