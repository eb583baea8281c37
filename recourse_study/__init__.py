"""`recourse-study`: the study platform's command line (Django's management commands with the
platform's settings), for an installed package as `manage.py` is for a checkout.

    recourse-study migrate
    recourse-study create_demo_study --design comparison
    recourse-study simulate_participants comparison --n 60 --eager
    recourse-study export_study comparison --out export

Without ``STUDYAPP_VAR_DIR`` the database, the broker file and the secret key go to ``var/``
in the current folder (an installed package's own folder is no place for them).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

PROG = "recourse-study"


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studyapp.config.settings")
    os.environ.setdefault("STUDYAPP_VAR_DIR", str(Path.cwd() / "var"))
    from django.core.management import execute_from_command_line

    args = sys.argv[1:] if argv is None else list(argv)
    execute_from_command_line([PROG, *args])
    return 0
