"""Write a study's export (evaluations, participants, page visits, codebook, schema) into a
folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from studyapp.export import export_study
from studyapp.management.base import StudyCommand


class Command(StudyCommand):
    help = (
        "Export a study: evaluations.csv, participants.csv, page_visits.csv, codebook.csv, "
        "schema.json."
    )

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
        parser.add_argument(
            "--with-test",
            action="store_true",
            help="include test participants (previews and bots; left out by default)",
        )
        parser.add_argument(
            "--with-r",
            action="store_true",
            help="also write labelled R and SPSS data (.rds, .sav) and analysis.R, which refits "
            "the study's models with mgcv",
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
                with_test=opts["with_test"],
                with_r=opts["with_r"],
            )
        except (ValueError, OSError) as exc:  # the export's or the R hand-off's ExportError
            self.fail(f"export of {study.slug} failed: {exc}")
        names = ", ".join(p.name for p in written)
        people = study.participants.all()
        n = people.count() if opts["with_test"] else people.filter(is_test=False).count()
        tests = (
            "" if opts["with_test"] else f"; {people.filter(is_test=True).count()} test left out"
        )
        self.stdout.write(
            f"exported study {study.slug} ({n} participants{tests}) to {out}: {names}"
        )
