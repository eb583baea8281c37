"""A study's texts for translators: `export` writes the PO file of one of its languages,
`import` reads a translated one back (a draft only; all or nothing), `missing` lists what
going live would refuse. The same services as the console's translations page and
`/api/studies/<slug>/translations/<lang>.po`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from studyapp.definition.errors import StudyError
from studyapp.management.base import StudyCommand
from studyapp.participation.language import study_languages
from studyapp.studies import translation_catalogue, translation_files


class Command(StudyCommand):
    help = (
        "Export a study's texts in one language as a PO file, import a translated PO file, "
        "or list the translations going live would miss."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("study", help="study slug")
        parser.add_argument("action", choices=["export", "import", "missing"])
        parser.add_argument("language", nargs="?", default="", help="export/import: e.g. ja")
        parser.add_argument("file", nargs="?", default="", help="import: the PO file to read")
        parser.add_argument("--out", default="", help="export: write here (default: stdout)")

    def handle(self, *args: Any, **opts: Any) -> None:
        study = self.study(opts["study"])
        action, lang = opts["action"], opts["language"]
        if action == "missing":
            for line in translation_catalogue.missing_translations(study):
                self.stdout.write(line)
            return
        if not lang:
            languages = ", ".join(study_languages(study))
            self.fail(f"{action} needs a language (one of the study's: {languages})")
        try:
            if action == "export":
                text = translation_files.po_export(study, lang)
                if opts["out"]:
                    Path(opts["out"]).write_text(text, encoding="utf-8")
                    self.stderr.write(f"wrote {opts['out']}")
                else:
                    sys.stdout.write(text)
                return
            if not opts["file"]:
                self.fail("import needs the PO file to read")
            path = Path(opts["file"])
            if not path.is_file():
                self.fail(f"{path}: no such file")
            done = translation_files.po_import(study, lang, path.read_bytes())
        except StudyError as exc:
            self.fail(str(exc))
        self.stdout.write(
            f"{study.slug} {lang}: {len(done.changed)} text(s) changed"
            + (f" ({', '.join(done.changed)})" if done.changed else "")
        )
