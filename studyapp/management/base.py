"""Base for the study commands: bad input ends with one `error:` line on stderr and exit
status 2, no traceback and no "CommandError:" prefix, as in `recourse-engine` and
`recourse-analysis` (`recourse_engine.cli_convention`); every command accepts
`--no-progress`, and bars are drawn only on a terminal."""

from __future__ import annotations

import sys
from datetime import datetime
from typing import Any, NoReturn

from django.core.management.base import BaseCommand, CommandError, CommandParser, SystemCheckError
from django.utils import timezone

from recourse_engine.cli_convention import bar_switch, usage_error
from studyapp.models import Study


class StudyCommand(BaseCommand):
    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.add_argument(
            "--no-progress",
            action="store_true",
            help="no progress bars (drawn only on a terminal); accepted by every command",
        )

        def error(message: str) -> NoReturn:
            if parser.called_from_command_line:
                sys.stderr.write(usage_error(parser.prog, message) + "\n")
                sys.exit(2)
            raise CommandError(f"Error: {message}", returncode=2)

        parser.error = error  # type: ignore[method-assign]
        return parser

    def execute(self, *args: Any, **options: Any) -> Any:
        """Django's run, with a CommandError on the command line printed as the one
        `error:` line (`--traceback` still raises it)."""
        try:
            return super().execute(*args, **options)
        except CommandError as exc:
            command_line = getattr(self, "_called_from_command_line", False)
            if not command_line or options.get("traceback") or isinstance(exc, SystemCheckError):
                raise
            sys.stderr.write(f"error: {exc}\n")
            sys.exit(2)

    def bars(self, options: dict[str, Any]) -> bool | None:
        """tqdm's `disable` for this run: off with --no-progress, else on a terminal only."""
        return bar_switch(options.get("no_progress", False))

    def fail(self, message: str) -> NoReturn:
        raise CommandError(message, returncode=2)

    def study(self, slug: str) -> Study:
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            known = ", ".join(Study.objects.values_list("slug", flat=True)) or "none"
            self.fail(f"no study {slug!r} (studies: {known})")
        return study

    def now(self, given: str) -> datetime:
        """The time a scheduled job runs as: `--now` (ISO 8601 with a time zone), or the
        current time when it is empty."""
        if not given:
            return timezone.now()
        try:
            now = datetime.fromisoformat(given)
        except ValueError:
            self.fail(f"--now: {given!r} is not an ISO 8601 time")
        if timezone.is_naive(now):
            self.fail(f"--now: {given!r} has no time zone (add +00:00 or Z)")
        return now
