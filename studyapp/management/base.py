"""Base for the study commands: bad arguments end with status 2 and one line, no traceback."""

from __future__ import annotations

import sys
from typing import Any, NoReturn

from django.core.management.base import BaseCommand, CommandError, CommandParser

from studyapp.models import Study


class StudyCommand(BaseCommand):
    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)

        def error(message: str) -> NoReturn:
            if parser.called_from_command_line:
                sys.stderr.write(f"{subcommand}: error: {message}\n")
                sys.exit(2)
            raise CommandError(f"Error: {message}", returncode=2)

        parser.error = error  # type: ignore[method-assign]
        return parser

    def fail(self, message: str) -> NoReturn:
        raise CommandError(message, returncode=2)

    def study(self, slug: str) -> Study:
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            known = ", ".join(Study.objects.values_list("slug", flat=True)) or "none"
            self.fail(f"no study {slug!r} (studies: {known})")
        return study
