"""Run the delayed-release schedule once: release, remind, expire (what beat runs every few
minutes). `--now` runs it as at another time (a test's clock; it releases and e-mails for
real); `--dry-run` lists what the run would do and changes nothing, sends nothing."""

from __future__ import annotations

from typing import Any

from studyapp.management.base import StudyCommand
from studyapp.participation import release, waves

#: a step's name as a dry run says it
WOULD = {  # (a dry run previews the delayed release only, not multi-wave studies' waves)
    "released": "would release",
    "reminded": "would remind",
    "expired": "would expire",
    "forgotten": "would forget the address of",
}


class Command(StudyCommand):
    help = "Release, remind and expire delayed-release participants whose time has come."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--now",
            default="",
            help="the time to run as, ISO 8601 with a time zone (e.g. 2030-05-01T09:00:00+00:00);"
            " default: the current time. Not a dry run: it releases and e-mails for real",
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="list the participants the run would release, remind, expire or forget the "
            "address of, and change nothing (no e-mail is sent)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        now = self.now(options["now"])
        if options["dry_run"]:
            self.stdout.write(f"dry run as at {now.isoformat()}: nothing is changed or sent")
            done = release.tick_preview(now=now)
        else:  # multi-wave studies' waves too, as the beat task runs them
            done = {**release.tick(now=now), **waves.tick(now=now)}
        for what, ids in done.items():
            label = WOULD[what] if options["dry_run"] else what
            self.stdout.write(
                f"{label}: {len(ids)}" + (f" ({', '.join(map(str, ids))})" if ids else "")
            )
