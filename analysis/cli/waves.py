"""`recourse-analysis waves`: a multi-wave study's invalidation rates, implementation
fidelity, approvals by group, segregation per wave and the GAMM of ratings on invalidation
(`analysis.waves`), from an export with waves.csv and changes.csv.

Every file is checked before anything is computed or written; a bad one ends the command
with exit status 2 and a one-line `error:` message.
"""

from __future__ import annotations

import argparse
from typing import Any

from analysis.cli.common import EXPORT_HELP, CliError, add_command, fail, out_folder


def register(subparsers: Any) -> None:
    add_command(
        subparsers,
        "waves",
        run_waves,
        export=EXPORT_HELP + " of a multi-wave study (with waves.csv and changes.csv)",
        help="a multi-wave study: invalidation, fidelity, approvals, segregation per wave",
        description="Per condition and wave: the invalidation rate of fully implemented "
        "plans, implementation fidelity, approvals by gender and age band, the segregation "
        "indices of the population, and a GAMM of the ratings on invalidation.",
        writes="waves_<table>.csv (invalidation, fidelity, approvals, segregation, gamm) "
        "and waves_notes.txt",
    )


def run_waves(args: argparse.Namespace) -> int:
    from analysis.waves import WavesError, analyse_waves, write_waves

    try:
        out = out_folder(args.out)
        result = analyse_waves(args.export)
    except (CliError, WavesError) as exc:
        return fail(str(exc))
    for path in write_waves(result, out):
        print(f"wrote {path}")
    return 0
