"""`recourse-analysis report`: the study report of an export (`analysis.report`): one
self-contained report.html, tables/*.csv|tex and figures/*.pdf|png.

Every input is checked and every section computed before the first file is written; bad
input ends the command with one `error:` line, exit status 2 and nothing written."""

from __future__ import annotations

import argparse
from typing import Any

from analysis.cli.common import EXPORT_HELP, CliError, add_command, fail, out_folder
from analysis.significance import BOOTSTRAP


def register(subparsers: Any) -> None:
    s = add_command(
        subparsers,
        "report",
        run_report,
        help="the study report: participant flow, descriptives, models, smooths, contrasts, "
        "segregation before/after and coding agreement as one HTML page, LaTeX/CSV tables and "
        "PDF/PNG figures",
        description="One self-contained HTML page (figures embedded; nothing fetched when it "
        "is opened) and the tables and figures a manuscript includes, from a study export. "
        "Test participants (is_test = 1) are left out unless --with-test.",
        export=EXPORT_HELP,
        writes="report.html, tables/*.csv and *.tex, figures/*.pdf and *.png",
    )
    s.add_argument("--factor", default="strategy",
                   help="evaluations column compared and tabulated (default strategy; e.g. method)")  # fmt: skip
    s.add_argument("--with-test", action="store_true",
                   help="include test participants (previews, bots), e.g. for a demo export")  # fmt: skip
    s.add_argument("--k", type=int, default=10, help="GAMM basis dimension (10)")
    s.add_argument("--min-per-level", type=int, default=20,
                   help="levels with fewer kept evaluations are left out of the comparison (20)")  # fmt: skip
    s.add_argument("--no-ordinal", action="store_true", help="skip the ordinal robustness fits")
    s.add_argument("--group", help="participants.csv column grouping the segregation (gender)")
    s.add_argument("--groups", help="two values of --group to keep, comma-separated")
    s.add_argument(
        "--bootstrap",
        type=int,
        default=BOOTSTRAP,
        help=f"segregation bootstrap resamples ({BOOTSTRAP}: enough for Holm-controlled verdicts)",
    )
    s.add_argument("--no-segregation", action="store_true", help="skip the segregation section")
    s.add_argument("--seed", type=int, default=0)


def run_report(args: argparse.Namespace) -> int:
    from analysis.report import Options, ReportError, build_report, write_report

    try:
        out = out_folder(args.out)
        if args.k < 3:
            raise CliError(f"--k must be at least 3, got {args.k}")
        if args.bootstrap < 1:
            raise CliError(f"--bootstrap must be at least 1, got {args.bootstrap}")
        if args.min_per_level < 1:
            raise CliError(f"--min-per-level must be at least 1, got {args.min_per_level}")
        groups = None
        if args.groups:
            groups = [v.strip() for v in args.groups.split(",") if v.strip()]
            if len(groups) != 2:
                raise CliError(f"--groups needs exactly two values, got {args.groups!r}")
        options = Options(
            factor=args.factor, with_test=args.with_test, k=args.k, ordinal=not args.no_ordinal,
            min_per_level=args.min_per_level, group=args.group, groups=groups,
            bootstrap=args.bootstrap, segregation=not args.no_segregation, seed=args.seed,
        )  # fmt: skip
        report = build_report(args.export, options)
    except (CliError, ReportError) as exc:
        return fail(str(exc))
    written = write_report(report, out)
    print(f"wrote {len(written)} files in {out}: report.html, tables/, figures/")
    return 0
