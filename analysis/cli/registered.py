"""`recourse-analysis registered`: the registered analysis of a study export, from the
registration bundle `recourse-study study register` wrote (`analysis.study.registered_run`).

The bundle, its hash and its plan, the export and the registered outcomes are all checked
before anything is fitted; a problem ends the command with exit status 2, one `error:` line
naming it, and nothing written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from analysis.cli.common import EXPORT_HELP, CliError, add_command, fail, out_folder


def register(subparsers: Any) -> None:
    s = add_command(
        subparsers,
        "registered",
        run_registered_command,
        help="run a study's registered analysis (its registration.json) on an export and "
        "report the deviations the export shows",
        description="Check the registration bundle's SHA-256 (against --sha256 or the "
        "registration.md beside it) and its plan, drop the evaluations its exclusion rules "
        "drop, fit every registered model with the commands' own code (the seed study's "
        "GAMMs as `study --no-ordinal --no-pygam`, the method comparison as `methods`), and "
        "write their tables, models_run.txt (for `recourse-study study deviations --models`) "
        "and the deviations the export shows: sample size, exclusions by rule, models not "
        "fitted or changed, and why.",
        export=EXPORT_HELP,
        writes="study/ (table_s2.csv/.md/.tex, figure3.png/.svg, models.json), methods/ (the "
        "method comparison's files), models_run.txt, deviations.json and deviations.md",
        progress=True,
    )
    s.add_argument(
        "--registration",
        required=True,
        type=Path,
        help="registration.json as `recourse-study study register` wrote it",
    )
    s.add_argument(
        "--sha256",
        help="the bundle's registered SHA-256 (default: the one in registration.md beside it)",
    )


def run_registered_command(args: argparse.Namespace) -> int:
    from analysis.study.registered import RegistrationError, read_registration
    from analysis.study.registered_run import run_registered
    from analysis.study.selection import StudyReportError

    def say(line: str) -> None:
        print(line, file=sys.stderr)

    try:
        out = out_folder(args.out)
        reg = read_registration(args.registration, args.sha256)
        report, written = run_registered(
            reg, args.export, out, progress=None if args.no_progress else say
        )
    except (CliError, RegistrationError, StudyReportError) as exc:
        return fail(str(exc))
    for path in written:
        print(path)
    n = len(report["deviations"])
    print(f"{len(report['models_run'])} model(s) run; {n} deviation(s) the export shows")
    return 0
