"""`recourse-analysis to-r`: an export as labelled R and SPSS data with an R script that refits
the study's models with mgcv (`analysis.r_export`)."""

from __future__ import annotations

import argparse
from typing import Any

from analysis.cli.common import EXPORT_HELP, CliError, add_command, fail, out_folder


def register(subparsers: Any) -> None:
    add_command(
        subparsers,
        "to-r",
        run_to_r,
        help="an export as labelled R (.rds, factors) and SPSS (.sav) data, with analysis.R "
        "refitting the study's models in mgcv",
        description="Write evaluations/participants as .rds (coded answers as factors with "
        "the codebook's labels) and .sav (value and variable labels), and analysis.R, which "
        "refits the seed study's four GAMMs and the strategy contrasts with mgcv: "
        "`Rscript analysis.R DIR`.",
        export=EXPORT_HELP,
        writes="evaluations.rds/.sav, participants.rds/.sav and analysis.R",
    )


def run_to_r(args: argparse.Namespace) -> int:
    from analysis.export import ExportError
    from analysis.r_export import write_r_data

    try:
        out = out_folder(args.out)
        written = write_r_data(args.export, out)
    except (CliError, ExportError) as exc:
        return fail(str(exc))
    for path in written:
        print(path)
    print(f"then: Rscript {out / 'analysis.R'} {out}")
    return 0
