"""Run the delayed-release schedule once: release, remind, expire (what beat runs every few
minutes). `--now` runs it as at another time: a dry run of a schedule, or a test's clock."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone

from studyapp.management.base import StudyCommand
from studyapp.participation import release


class Command(StudyCommand):
    help = "Release, remind and expire delayed-release participants whose time has come."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--now",
            default="",
            help="the time to run as, ISO 8601 with a time zone (e.g. 2030-05-01T09:00:00+00:00);"
            " default: the current time",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        now = timezone.now()
        if options["now"]:
            try:
                now = datetime.fromisoformat(options["now"])
            except ValueError:
                self.fail(f"--now: {options['now']!r} is not an ISO 8601 time")
            if timezone.is_naive(now):
                self.fail(f"--now: {options['now']!r} has no time zone (add +00:00 or Z)")
        done = release.tick(now=now)
        for what, ids in done.items():
            self.stdout.write(
                f"{what}: {len(ids)}" + (f" ({', '.join(map(str, ids))})" if ids else "")
            )
