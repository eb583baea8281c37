"""Migration 0014: studies made before the retention rules have none (nothing is deleted);
one closed before gets its last change as its close time, so a rule counted from the close
never deletes sooner than it says."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("studyapp", "0013_participant_device")]
AFTER = [("studyapp", "0014_retention")]


@pytest.mark.django_db(transaction=True)
def test_existing_studies_have_no_rules_and_a_closed_one_a_close_time() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    try:
        Study = executor.loader.project_state(BEFORE).apps.get_model("studyapp", "Study")
        common = {"schema": {}, "schema_hash": "x", "design": "random:1", "pool_csv": "",
                  "pool_hash": "x", "outcome_codes": {}, "title": "Old"}  # fmt: skip
        closed = Study.objects.create(slug="closed", state="closed", **common)
        Study.objects.create(slug="live", state="live", **common)
        executor = MigrationExecutor(connection)
        executor.migrate(AFTER)
        Study = executor.loader.project_state(AFTER).apps.get_model("studyapp", "Study")
        rows = {s.slug: (s.retention, s.closed_at) for s in Study.objects.all()}
        assert rows == {"closed": ({}, closed.updated_at), "live": ({}, None)}
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
