"""The study database before a `recourse-study` command that uses it: the embedded default
(SQLite in var/, nobody else's) is migrated on the spot, so every documented command works
in a fresh folder; a database given by DATABASE_URL belongs to its operator, and the command
stops with the one line to run instead of changing its schema unasked."""

from __future__ import annotations

import os
from typing import TextIO

#: commands that never touch the study tables (or manage the migrations themselves)
NO_DATABASE = frozenset(
    {
        "help",
        "version",
        "check",
        "compilemessages",
        "makemessages",
        "collectstatic",
        "findstatic",
        "diffsettings",
        "sendtestemail",
        "startapp",
        "startproject",
        "dbshell",
        "test",
        "migrate",
        "makemigrations",
        "showmigrations",
        "sqlmigrate",
        "sqlflush",
        "sqlsequencereset",
        "squashmigrations",
        "optimizemigration",
    }
)


def needs_database(args: list[str]) -> bool:
    """Whether the command line `args` (after the program name) runs a command on the data."""
    if not args or args[0].startswith("-") or args[0] in NO_DATABASE:
        return False
    return not any(a in ("-h", "--help") for a in args[1:])


def embedded() -> bool:
    """The settings' own rule: no DATABASE_URL means SQLite in the var folder."""
    return not os.environ.get("DATABASE_URL")


def ensure_migrated(stderr: TextIO) -> str | None:
    """Migrate the embedded database when it lags behind; None when the command may run,
    else the one-line error to print."""
    import django
    from django.core.management import call_command
    from django.db import DatabaseError, connection
    from django.db.migrations.executor import MigrationExecutor

    django.setup()
    try:
        executor = MigrationExecutor(connection)
        plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    except DatabaseError as exc:
        return f"error: cannot read the study database: {exc}"
    if not plan:
        return None
    if not embedded():
        return (
            f"error: the database of DATABASE_URL lacks {len(plan)} migrations; "
            "run `recourse-study migrate` first"
        )
    call_command("migrate", interactive=False, verbosity=0)
    stderr.write(f"recourse-study: set up the database {connection.settings_dict['NAME']}\n")
    return None
