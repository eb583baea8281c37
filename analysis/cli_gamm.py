"""`python -m analysis gamm` (one GAMM from a CSV) and `python -m analysis study` (the seed
study's four GAMMs from an export: Table S2 and Figure 3)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from analysis.cli_common import CliError, fail, read_csv
from analysis.gamm.validate import GammInputError


def _check_out_file(path: Path) -> None:
    if path.is_dir():
        raise CliError(f"{path}: is a directory, expected a file name")
    if not path.parent.is_dir():
        raise CliError(f"{path.parent}: output folder does not exist")


def run_gamm(args: argparse.Namespace) -> int:
    from analysis.gamm.fit import fit_gamm
    from analysis.gamm.report import format_summary

    try:
        seed_flags = [args.outcome, args.distance, args.participant]
        if args.formula is not None and any(f is not None for f in seed_flags):
            raise CliError("--formula replaces --outcome/--distance/--participant; give one")
        if args.formula is None and any(f is None for f in seed_flags):
            raise CliError("give --formula, or all of --outcome, --distance and --participant")
        if args.k < 3:
            raise CliError(f"--k must be at least 3, got {args.k}")
        if args.json is not None:
            _check_out_file(Path(args.json))
        if args.formula is not None:
            from analysis.gamm.formula import parse_formula

            parse_formula(args.formula)  # a bad formula is refused before the file is read
        data = read_csv(Path(args.input))
        data.attrs["source"] = args.input
        if args.formula is not None:
            fit = fit_gamm(args.formula, data, method=args.method)
        else:
            fit = fit_gamm(
                data,
                args.outcome,
                args.distance,
                args.participant,
                args.basis,
                args.k,
                method=args.method,
            )
    except (CliError, GammInputError) as exc:
        return fail(f"{args.input}: {exc}" if isinstance(exc, GammInputError) else str(exc))
    except np.linalg.LinAlgError as exc:
        return fail(f"{args.input}: the model is numerically singular for these data ({exc})")
    summary = fit.summary_dict()
    if args.json is None:
        print(json.dumps(summary, indent=2))
    else:
        Path(args.json).write_text(json.dumps(summary, indent=2) + "\n")
        print(format_summary(fit))
        print(f"wrote {args.json}")
    return 0


def run_study(args: argparse.Namespace) -> int:
    from analysis.export import ExportError, load_export
    from analysis.gamm.report import write_study_report

    out = Path(args.out)
    try:
        if out.exists() and not out.is_dir():
            raise CliError(f"{out}: exists and is not a folder")
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
    except ExportError as exc:
        return fail(f"{args.export}: {exc}")
    except (CliError, GammInputError) as exc:
        return fail(str(exc))
    except np.linalg.LinAlgError as exc:
        return fail(f"{args.export}: a model is numerically singular for these data ({exc})")
    for path in written:
        print(path)
    return 0


def register(subparsers) -> None:
    """Add `gamm` and `study` to `python -m analysis`."""
    g = subparsers.add_parser(
        "gamm",
        help="fit a GAMM as mgcv: --formula in mgcv syntax, or the seed study's "
        "y ~ s(distance) + s(participant, bs='re') + s(participant, distance, bs='re')",
        description="Fit a GAMM by REML or ML (as mgcv) and report mgcv's summary.",
    )
    g.add_argument("--input", required=True, help="CSV with one row per rating")
    g.add_argument(
        "--formula",
        help="model in mgcv syntax, e.g. \"y ~ strategy + s(x, by = strategy) + s(uid, bs = 're')\"",
    )
    g.add_argument("--outcome", help="rating column (integers 1..7; without --formula)")
    g.add_argument("--distance", help="distance column (the smooth's covariate)")
    g.add_argument("--participant", help="participant id column")
    g.add_argument("--basis", choices=("tp", "cr"), default="tp", help="spline basis (mgcv bs)")
    g.add_argument("--k", type=int, default=10, help="basis dimension (default 10)")
    g.add_argument("--method", choices=("REML", "ML"), default="REML", help="mgcv's method")
    g.add_argument("--json", help="write the summary JSON here (default: print it)")
    g.set_defaults(func=run_gamm)

    s = subparsers.add_parser(
        "study",
        help="the four GAMMs of an export: Table S2 (CSV/MD/LaTeX) and Figure 3 (PNG/SVG)",
        description="Drop evaluations with an impossible item, fit acceptance/action x "
        "sparsity/proximity GAMMs, write Table S2 and Figure 3.",
    )
    s.add_argument("--export", required=True, help="study export folder (evaluations.csv ...)")
    s.add_argument("--out", required=True, help="report folder (created if missing)")
    s.add_argument("--basis", choices=("tp", "cr"), default="tp")
    s.add_argument("--k", type=int, default=10)
    s.add_argument(
        "--no-ordinal", action="store_true", help="skip the cumulative-logit robustness fits"
    )
    s.add_argument(
        "--no-pygam", action="store_true", help="skip the fixed-effects pygam GAMs in Figure 3"
    )
    s.add_argument("--no-progress", action="store_true", help="no progress bar")
    s.set_defaults(func=run_study)
