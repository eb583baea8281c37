"""`recourse-analysis methods`: the method-comparison report of a study export.

Every argument and the export are checked, and every model is fitted, before the first file
is written; bad input ends the command with exit status 2, one `error:` line and no files.

The command is named `methods` because `study` is already the seed study's report (Table S2
and Figure 3, `analysis.cli.study`).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import numpy as np

from analysis.cli.common import (
    EXPORT_HELP,
    CliError,
    add_command,
    fail,
    out_folder,
    refuse_json_flag,
)

#: the machine-readable summary, written inside --out with the report
SUMMARY_JSON = "summary.json"


def register(subparsers: Any) -> None:
    from analysis.study.selection import DISTANCES, MIN_PER_LEVEL

    s = add_command(
        subparsers,
        "methods",
        run_methods,
        help="compare the strategies or methods of a study export: contrasts with 95%% "
        "intervals, smooths by strategy, does the distance effect differ",
        description="For acceptance and action: y ~ FACTOR + s(DISTANCE) + s(participant, "
        "bs='re') for the contrasts, y ~ FACTOR + s(DISTANCE, by=FACTOR) + s(participant, "
        "bs='re') for the smooths, and the ML fits of both compared by AIC and, where the "
        "by-level model is the larger and closer one, mgcv's likelihood-ratio test; first, n, "
        "mean and SD of each rating per condition and level.",
        export=EXPORT_HELP,
        writes="report.md, descriptives.csv, contrasts.csv, smooths.csv, comparison.csv, "
        f"evaluations_by_level.csv, a PNG per outcome and {SUMMARY_JSON}",
        json_note=True,
    )
    s.add_argument(
        "--factor",
        default="strategy",
        help="evaluations column whose levels are compared (default strategy; e.g. method, origin)",
    )
    s.add_argument(
        "--reference", help="level the contrasts are taken against (default: the first sorted)"
    )
    s.add_argument(
        "--distance",
        choices=DISTANCES,
        default="proximity",
        help="the smooths' covariate (default proximity: continuous, where sparsity has few "
        "values per method)",
    )
    s.add_argument(
        "--k", type=int, default=10, help="basis dimension, lowered to fit every level (10)"
    )
    s.add_argument(
        "--min-per-level",
        type=int,
        default=MIN_PER_LEVEL,
        help=f"levels with fewer kept evaluations are dropped ({MIN_PER_LEVEL})",
    )


def run_methods(args: argparse.Namespace) -> int:
    from analysis.export import ExportError
    from analysis.gamm import GammInputError
    from analysis.study.methods_figures import render_report, terminal_table, write_report
    from analysis.study.methods_report import build_report
    from analysis.study.selection import StudyReportError, load_study_export

    try:
        if args.k < 3:
            raise CliError(f"--k must be at least 3, got {args.k}")
        if args.min_per_level < 1:
            raise CliError(f"--min-per-level must be at least 1, got {args.min_per_level}")
        refuse_json_flag(args, SUMMARY_JSON)
        out_folder(args.out)
        export = load_study_export(args.export)
        report = build_report(
            export,
            str(args.export),
            args.factor,
            args.distance,
            args.reference,
            min_per_level=args.min_per_level,
            k=args.k,
        )
        files = render_report(report)
    except (CliError, StudyReportError) as exc:
        return fail(str(exc))
    except ExportError as exc:  # its message starts with the export's path
        return fail(str(exc))
    except GammInputError as exc:
        return fail(f"{args.export}: {str(exc).splitlines()[0]}")
    except np.linalg.LinAlgError as exc:
        return fail(f"{args.export}: a model is numerically singular for these data ({exc})")
    written = write_report(files, args.out)
    summary = args.out / SUMMARY_JSON
    summary.write_text(json.dumps(report.to_json(), indent=2) + "\n", encoding="utf-8")
    written.append(summary)
    print(terminal_table(report))
    print()
    print("wrote " + ", ".join(str(p) for p in written))
    return 0
