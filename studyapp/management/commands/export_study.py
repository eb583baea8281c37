"""Write a study's export (evaluations, participants, codebook, schema) into a folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from studyapp.export import ExportError, export_study
from studyapp.management.base import StudyCommand


class Command(StudyCommand):
    help = "Export a study: evaluations.csv, participants.csv, codebook.csv, schema.json."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("study", help="study slug")
        parser.add_argument("--out", required=True, type=Path, help="output folder")
        parser.add_argument("--parquet", action="store_true", help="also write .parquet files")
        parser.add_argument(
            "--with-text", action="store_true", help="include the free-text reasons"
        )
        parser.add_argument(
            "--with-panel-ids",
            action="store_true",
            help="include panel ids (recruitment_id, panel parameters) in participants.csv",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        study = self.study(opts["study"])
        out: Path = opts["out"]
        if out.exists() and not out.is_dir():
            self.fail(f"--out {out}: exists and is not a folder")
        try:
            written = export_study(
                study=study,
                out=out,
                parquet=opts["parquet"],
                with_text=opts["with_text"],
                with_panel_ids=opts["with_panel_ids"],
            )
        except (ExportError, OSError) as exc:
            self.fail(f"export of {study.slug} failed: {exc}")
        names = ", ".join(p.name for p in written)
        n = study.participants.count()
        self.stdout.write(f"exported study {study.slug} ({n} participants) to {out}: {names}")
