"""The migrations describe the models exactly: a model change without its migration would
reach a database only as an error at the first query."""

import io

import pytest
from django.core.management import call_command
from django.db.migrations.loader import MigrationLoader


@pytest.mark.django_db
def test_models_need_no_new_migration() -> None:
    out = io.StringIO()
    try:
        call_command("makemigrations", "--check", "--dry-run", stdout=out, stderr=out)
    except SystemExit as exit_:  # --check exits 1 when a migration is missing
        pytest.fail(f"a model change has no migration (exit {exit_.code}):\n{out.getvalue()}")


def test_the_squash_replaces_every_earlier_migration() -> None:
    """A database migrated to 0011 before the squash must find each of its rows replaced."""
    loader = MigrationLoader(None, ignore_no_migrations=True)
    squashed = loader.disk_migrations[("studyapp", "0001_squashed_0011_approved_branch_decision_page")]
    numbers = sorted(int(name[:4]) for _, name in squashed.replaces)
    assert numbers == list(range(1, 12))
