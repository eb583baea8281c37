"""`recourse-study study ACTION`: a study as one file, its versions and its registration.

study export SLUG --out DIR        study.json, pool.csv (and decision_model.bin)
study import DIR|ZIP --slug NEW    a new draft study from a study file (all or nothing)
study versions SLUG                the numbered versions, who and when
study diff SLUG A B                what changed from version A to version B
study register SLUG --out DIR      freeze a registration: registration.json, registration.md
study deviations SLUG --out DIR    deviations.json, deviations.md against the registration
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model

from studyapp.definition.errors import StudyError
from studyapp.management.base import StudyCommand
from studyapp.prereg import bundle, deviations, history, study_files
from studyapp.prereg.diff import document_diff
from studyapp.prereg.markdown import registration_markdown


class Command(StudyCommand):
    help = "A study as one file (export, import), its versions, registration and deviations."

    def add_arguments(self, parser: Any) -> None:
        sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
        p = sub.add_parser("export", help="write the study file: study.json, pool.csv, "
                           "decision_model.bin (uploaded models)")  # fmt: skip
        p.add_argument("slug")
        p.add_argument("--out", required=True, help="folder (created when missing)")
        p = sub.add_parser("import", help="create a draft study from a study file")
        p.add_argument("source", help="the export's folder, or the console's ZIP")
        p.add_argument("--slug", required=True, help="the new study's slug")
        p.add_argument("--owner", default="", help="username of the new study's owner")
        p = sub.add_parser("versions", help="list the study's versions")
        p.add_argument("slug")
        p = sub.add_parser("diff", help="what changed between two versions")
        p.add_argument("slug")
        p.add_argument("a", type=int)
        p.add_argument("b", type=int)
        p = sub.add_parser("register", help="freeze a registration bundle: registration.json, "
                           "registration.md")  # fmt: skip
        p.add_argument("slug")
        p.add_argument("--out", required=True, help="folder (created when missing)")
        p.add_argument("--by", default="", help="username registering")
        p = sub.add_parser("deviations", help="deviations from the registration: "
                           "deviations.json, deviations.md")  # fmt: skip
        p.add_argument("slug")
        p.add_argument("--out", required=True, help="folder (created when missing)")
        p.add_argument("--models", default="", help="the models an analysis ran: its JSON "
                       "report or a text file, one formula per line")  # fmt: skip
        p.add_argument("--with-test", action="store_true", help="count test participants")
        for action in sub.choices.values():  # the shared convention, after the action too
            action.add_argument(
                "--no-progress", action="store_true", default=argparse.SUPPRESS,
                help="no progress bars (this command draws none)",
            )  # fmt: skip

    def _user(self, name: str) -> Any:
        if not name:
            return None
        user = get_user_model().objects.filter(username=name).first()
        if user is None:
            self.fail(f"no user {name!r}")
        return user

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            getattr(self, f"_{options['action']}")(options)
        except StudyError as exc:
            self.fail(str(exc))

    def _export(self, options: dict[str, Any]) -> None:
        study = self.study(options["slug"])
        for path in study_files.study_file_write(study, Path(options["out"])):
            self.stdout.write(f"wrote {path}")

    def _import(self, options: dict[str, Any]) -> None:
        source = Path(options["source"])
        owner = self._user(options["owner"])
        if source.is_file():
            data, files = study_files.files_of_zip(source.read_bytes())
        else:
            data, files = study_files.files_of_folder(source)
        with history.acting_as(owner, f"imported from {source.name}"):
            study = study_files.study_file_create(
                data=data, files=files, slug=options["slug"], owner=owner
            )
        self.stdout.write(f"created study {study.slug} (draft) from {source}")

    def _versions(self, options: dict[str, Any]) -> None:
        study = self.study(options["slug"])
        history.latest_version(study)
        for v in study.versions.select_related("by").order_by("number"):
            who = v.by.get_username() if v.by_id else "-"
            note = f"  {v.note}" if v.note else ""
            self.stdout.write(f"{v.number:>4}  {v.at.isoformat()}  {who}  {v.sha256[:12]}{note}")

    def _diff(self, options: dict[str, Any]) -> None:
        study = self.study(options["slug"])
        found = {
            v.number: v for v in study.versions.filter(number__in=[options["a"], options["b"]])
        }
        for n in (options["a"], options["b"]):
            if n not in found:
                self.fail(f"study {study.slug} has no version {n} (see `study versions`)")
        changes = document_diff(found[options["a"]].document, found[options["b"]].document)
        for change in changes:
            self.stdout.write(change.line())
        if not changes:
            self.stdout.write("no difference")

    def _register(self, options: dict[str, Any]) -> None:
        study = self.study(options["slug"])
        by = self._user(options["by"])
        out = Path(options["out"])
        with history.acting_as(by):
            reg = bundle.study_register(study=study, by=by)
        out.mkdir(parents=True, exist_ok=True)
        (out / "registration.json").write_bytes(bundle.bundle_bytes(reg))
        md = registration_markdown(
            bundle.bundle_of(reg), reg.sha256, at=reg.at.isoformat(),
            by=by.get_username() if by else "",
        )  # fmt: skip
        (out / "registration.md").write_text(md, encoding="utf-8")
        self.stdout.write(f"registered {study.slug}: sha256 {reg.sha256}")
        self.stdout.write(f"wrote {out / 'registration.json'}\nwrote {out / 'registration.md'}")

    def _deviations(self, options: dict[str, Any]) -> None:
        study = self.study(options["slug"])
        models = deviations.models_run_read(Path(options["models"])) if options["models"] else None
        report = deviations.study_deviations(
            study, models_run=models, with_test=options["with_test"]
        )
        out = Path(options["out"])
        out.mkdir(parents=True, exist_ok=True)
        text = json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        (out / "deviations.json").write_text(text, encoding="utf-8")
        (out / "deviations.md").write_text(deviations.deviations_markdown(report), encoding="utf-8")
        self.stdout.write(f"{len(report['deviations'])} deviation(s) from registration "
                          f"{report['registration']['sha256'][:12]}")  # fmt: skip
        self.stdout.write(f"wrote {out / 'deviations.json'}\nwrote {out / 'deviations.md'}")
