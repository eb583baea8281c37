"""`recourse-analysis study`: the seed study's report of an export, its four GAMMs (Table S2
and Figure 3, `analysis.study.seed_report`)."""

from __future__ import annotations

import argparse

import numpy as np

from analysis.cli.common import EXPORT_HELP, CliError, add_command, fail, out_folder
from analysis.gamm.validate import GammInputError


def register(subparsers) -> None:
    s = add_command(
        subparsers,
        "study",
        run_study,
        help="the seed study's report of an export: four GAMMs, Table S2 and Figure 3",
        description="Drop evaluations with an impossible item, fit acceptance/action x "
        "sparsity/proximity GAMMs, write Table S2 (CSV/Markdown/LaTeX) and Figure 3 "
        "(PNG/SVG).",
        export=EXPORT_HELP,
        writes="table_s2.csv/.md/.tex, figure3.png/.svg and models.json",
        progress=True,
    )
    s.add_argument("--basis", choices=("tp", "cr"), default="tp")
    s.add_argument("--k", type=int, default=10)
    s.add_argument(
        "--no-ordinal", action="store_true", help="skip the cumulative-logit robustness fits"
    )
    s.add_argument(
        "--no-pygam", action="store_true", help="skip the fixed-effects pygam GAMs in Figure 3"
    )


def run_study(args: argparse.Namespace) -> int:
    from analysis.export import ExportError, load_export
    from analysis.study.seed_report import write_study_report

    try:
        out = out_folder(args.out)
        if args.k < 3:
            raise CliError(f"--k must be at least 3, got {args.k}")
        export = load_export(args.export)
        written = write_study_report(
            export.kept_evaluations(),
            out,
            basis=args.basis,
            k=args.k,
            n_dropped=int(len(export.evaluations) - len(export.kept_evaluations())),
            ordinal=not args.no_ordinal,
            progress=not args.no_progress,
            fixed_gam=not args.no_pygam,
        )
    except (CliError, GammInputError, ExportError) as exc:
        return fail(str(exc))
    except np.linalg.LinAlgError as exc:
        return fail(f"{args.export}: a model is numerically singular for these data ({exc})")
    for path in written:
        print(path)
    return 0
