"""Create (once) the reference car-loan study with a synthetic pool, live, plus an admin login.

The study is made by `carloan.carloan_study_create`, the function the console and the API
use too, so the demo is the same study a researcher gets from the "Add study" page.
`--design comparison` makes the method-comparison demo instead (`studies.comparison`:
recourse methods beside pool picks, decided by a model trained on the items); `all-methods`
shows every method; any other value is taken as a design string for that study. The
methods of a comparison study are fitted by the command itself, before it returns.

Idempotent: a second run changes nothing and prints the same link and login. The admin
password is generated on first run and kept in var/admin-password (mode 600).
"""

from __future__ import annotations

import secrets
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from recourse_engine import DesignError, parse_design
from studyapp.definition.errors import StudyError
from studyapp.management.base import StudyCommand
from studyapp.models import STUDY_LANGUAGES, Study
from studyapp.studies import carloan, comparison, services

#: named designs (None: the reference study as the paper ran it)
DESIGNS: dict[str, str | None] = {
    "reference": None,
    "comparison": comparison.COMPARISON_DESIGN,
    "all-methods": comparison.ALL_METHODS_DESIGN,
}


class Command(StudyCommand):
    help = "Create the demo car-loan study (idempotent) and an admin user; print link and login."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--slug", default=None, help="default: carloan (reference) or comparison (otherwise)"
        )
        parser.add_argument(
            "--design",
            default="reference",
            help="reference (the paper's study), comparison (pool picks and methods: "
            f"{comparison.COMPARISON_DESIGN}), all-methods ({comparison.ALL_METHODS_DESIGN}), "
            "or a design string for a comparison study",
        )
        parser.add_argument("--pool-size", type=int, default=3683)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")
        parser.add_argument("--admin-user", default="admin")
        parser.add_argument("--no-admin", action="store_true", help="do not create an admin")
        parser.add_argument(
            "--language",
            default="en",
            help="participant pages in en (default) or ja; the study carries both languages",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        if not 10 <= opts["pool_size"] <= 200_000:
            self.fail(f"--pool-size must be 10..200000, got {opts['pool_size']}")
        languages = [code for code, _ in STUDY_LANGUAGES]
        if opts["language"] not in languages:
            self.fail(f"--language must be one of {', '.join(languages)}, got {opts['language']!r}")
        design = DESIGNS.get(opts["design"], opts["design"])
        if design is not None:
            try:  # checked whether or not the study exists: a typo is never "left unchanged"
                parse_design(design)
            except DesignError as exc:
                names = ", ".join(DESIGNS)
                self.fail(f"--design {opts['design']!r}: {exc} (or one of: {names})")
        slug = opts["slug"] or ("carloan" if design is None else "comparison")
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            try:
                with transaction.atomic():
                    study = self._create(slug, design, opts)
                    services.study_set_state(study=study, state=Study.State.LIVE)
            except StudyError as exc:
                self.fail(str(exc))
            self.stdout.write(
                f"created study {slug}: {study.pool_rows} pool profiles, {study.design}"
            )
            if design is not None:
                self._fit(study)
        else:
            self.stdout.write(f"study {slug} exists ({study.state}); left unchanged")
        base = opts["base_url"].rstrip("/")
        self.stdout.write(f"Participant link: {base}/s/{slug}/")
        if not opts["no_admin"]:
            self._admin(opts["admin_user"], base)

    def _create(self, slug: str, design: str | None, opts: dict[str, Any]) -> Study:
        if design is None:
            return carloan.carloan_study_create(
                slug=slug,
                title="Car loan study (reference, synthetic pool)",
                language=opts["language"],
                pool_size=opts["pool_size"],
                settings={"seed": opts["seed"]},
            )
        return comparison.comparison_study_create(
            slug=slug,
            design=design,
            language=opts["language"],
            pool_size=opts["pool_size"],
            seed=opts["seed"],
        )

    def _fit(self, study: Study) -> None:
        """Fit the study's methods here and now (a worker that also got the task finds them
        claimed), so the demo shows generated recourses without waiting for a worker."""
        from studyapp.generation import method_fitting

        for row, state in method_fitting.fits_run(study_id=study.pk).items():
            fitted = study.fitted_methods.get(strategy=row, pool_hash=study.pool_hash)
            took = f" in {fitted.seconds:.1f} s" if fitted.seconds is not None else ""
            self.stdout.write(f"  {row}: {state}{took} {fitted.message}")

    def _admin(self, username: str, base: str) -> None:
        User = get_user_model()
        secret = settings.VAR_DIR / "admin-password"
        if not User.objects.filter(username=username).exists():
            password = secrets.token_urlsafe(12)
            User.objects.create_superuser(username=username, email="", password=password)
            secret.parent.mkdir(parents=True, exist_ok=True)
            secret.write_text(password + "\n")
            secret.chmod(0o600)
        elif secret.exists():
            password = secret.read_text().strip()
        else:
            password = (
                "(set earlier; change it with: python manage.py changepassword " + username + ")"
            )
        self.stdout.write(f"Admin: {base}/admin/  user {username}  password {password}")
