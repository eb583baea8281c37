"""`recourse-study`: the study platform's command line (Django's management commands with the
platform's settings), for an installed package as `manage.py` is for a checkout.

    recourse-study create_demo_study --design comparison
    recourse-study simulate_participants comparison --n 60 --eager
    recourse-study export_study comparison --with-test --out export
    recourse-study serve --demo

Without ``STUDYAPP_VAR_DIR`` the database, the broker file and the secret key go to ``var/``
in the current folder (an installed package's own folder is no place for them). A command
that uses the database migrates the embedded one first (`database.py`); a command that fails
in a folder that had no ``var/`` leaves none behind. A missing extra is named in one line
(`extras.py`); `serve` starts gunicorn and a Celery worker (`serve.py`).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

PROG = "recourse-study"
#: commands of this program beside Django's management commands (listed by `help`)
OWN_COMMANDS = {"serve": "gunicorn and a Celery worker, until Ctrl-C (serve --help)"}


def _status(code: object) -> int:
    if code is None:
        return 0
    return code if isinstance(code, int) else 1


def _holds_only_a_key(var: Path) -> bool:
    """Whether `var` holds no file but the secret key the settings make on import."""
    return var.is_dir() and all(p.is_dir() or p == var / "secret_key" for p in var.rglob("*"))


def _help_requested(args: list[str]) -> bool:
    return not args or args in (["help"], ["--help"], ["-h"])


def _unknown_command(args: list[str]) -> str | None:
    """The one `error:` line for a command that does not exist (Django's own message is
    two lines and exit status 1), before anything touches the database."""
    if not args or args[0].startswith("-") or args[0] == "help" or args[0] in OWN_COMMANDS:
        return None
    import django
    from django.core.management import get_commands

    django.setup()
    if args[0] in get_commands():
        return None
    return f"error: unknown command {args[0]!r} (see {PROG} help)"


def _run(args: list[str]) -> int:
    from recourse_study import database, extras

    try:
        if args[:1] == ["serve"] or args[:2] == ["help", "serve"]:
            from recourse_study import serve

            return serve.main(["--help"] if args[0] == "help" else args[1:])
        unknown = _unknown_command(args)
        if unknown:
            sys.stderr.write(unknown + "\n")
            return 2
        if database.needs_database(args):
            problem = database.ensure_migrated(sys.stderr)
            if problem:
                sys.stderr.write(problem + "\n")
                return 2
        from django.core.management import execute_from_command_line

        execute_from_command_line([PROG, *args])
        if _help_requested(args):
            sys.stdout.write(f"\n[{PROG}]\n")
            for name, what in OWN_COMMANDS.items():
                sys.stdout.write(f"    {name}  ({what})\n")
    except SystemExit as exc:
        return _status(exc.code)
    except ModuleNotFoundError as exc:
        hint = extras.install_hint(exc.name or "")
        if hint is None:
            raise
        sys.stderr.write(hint + "\n")
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    from recourse_study import extras

    args = sys.argv[1:] if argv is None else list(argv)
    missing = extras.missing_at_startup()
    if missing:
        sys.stderr.write(missing + "\n")
        return 2
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studyapp.config.settings")
    os.environ.setdefault("STUDYAPP_VAR_DIR", str(Path.cwd() / "var"))
    var = Path(os.environ["STUDYAPP_VAR_DIR"]).resolve()
    made_here = not var.exists()
    status = 1
    try:
        status = _run(args)
    finally:
        if made_here and (status != 0 or _holds_only_a_key(var)):
            # a command that failed in a fresh folder leaves nothing behind, and one that
            # stored nothing leaves no folder holding only the settings' secret key
            shutil.rmtree(var, ignore_errors=True)
    return status
