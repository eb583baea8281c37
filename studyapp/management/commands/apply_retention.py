"""Apply the retention rules once: delete what every study's rules (or one study's) make due,
with a receipt per data class (what beat runs daily). `--now` runs as at another time (a
test's clock; it deletes for real); `--dry-run` says what the run would delete and changes
nothing."""

from __future__ import annotations

from typing import Any

from studyapp.management.base import StudyCommand
from studyapp.models import DeletionReceipt
from studyapp.retention.service import retention_apply


def receipt_line(r: DeletionReceipt, verb: str) -> str:
    """One receipt as a line: what, how much, under which rule."""
    what = f"{len(r.files)} export file(s)" if r.files else f"{r.rows} row(s)"
    who = "" if r.data_class == DeletionReceipt.DataClass.EXPORT_FILES else " of"
    return f"{verb} {r.data_class}{who}: {r.participants} participant(s), {what}; {r.rule}"


class Command(StudyCommand):
    help = "Delete what the studies' retention rules make due, with deletion receipts."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("study", nargs="?", default="", help="study slug (default: all)")
        parser.add_argument(
            "--now",
            default="",
            help="the time to run as, ISO 8601 with a time zone (e.g. 2030-05-01T09:00:00+00:00);"
            " default: the current time. Not a dry run: it deletes for real",
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="say what the run would delete (the same counts) and change nothing",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        now = self.now(options["now"])
        studies = [self.study(options["study"])] if options["study"] else None
        dry = options["dry_run"]
        if dry:
            self.stdout.write(f"dry run as at {now.isoformat()}: nothing is changed")
        run = retention_apply(now=now, studies=studies, dry_run=dry)
        verb = "would delete" if dry else "deleted"
        for slug, receipts in run.receipts.items():
            if receipts or studies is not None:
                self.stdout.write(f"{slug}:" if receipts else f"{slug}: nothing due")
            for r in receipts:
                self.stdout.write(f"  {receipt_line(r, verb)}")
        if studies is None and not any(run.receipts.values()) and not run.failed:
            self.stdout.write("nothing due")
        for slug, problem in run.failed.items():
            self.stderr.write(f"{slug}: failed, nothing of it deleted: {problem}")
        if run.failed:
            raise SystemExit(1)
