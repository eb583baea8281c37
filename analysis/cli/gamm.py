"""`recourse-analysis gamm`: one GAMM from a CSV of ratings, fitted as mgcv would, and its
summary."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from analysis.cli.common import CliError, add_command, fail, out_folder, read_csv, refuse_json_flag
from analysis.gamm.memory import ENV_VAR, parse_size
from analysis.gamm.validate import GammInputError
from analysis.table_schemas import gamm_input

#: the files `gamm --out DIR` writes
GAMM_JSON, GAMM_TEXT = "gamm.json", "summary.txt"
#: the export's participant column, the default of --participant
PARTICIPANT = "participant"


def run_gamm(args: argparse.Namespace) -> int:
    from analysis.gamm.fit import fit_gamm

    try:
        refuse_json_flag(args, GAMM_JSON)
        seed_flags = [args.outcome, args.distance, args.participant]
        if args.formula is not None and any(f is not None for f in seed_flags):
            raise CliError("--formula replaces --outcome/--distance/--participant; give one")
        if args.formula is None and (args.outcome is None or args.distance is None):
            raise CliError("give --formula, or --outcome and --distance")
        if args.formula is None and args.participant is None:
            args.participant = PARTICIPANT
        if args.k < 3:
            raise CliError(f"--k must be at least 3, got {args.k}")
        if args.memory_limit is not None:
            try:  # a bad size is refused before the file is read
                parse_size(args.memory_limit)
            except GammInputError as exc:
                raise CliError(f"--memory-limit: {exc}") from None
        out = None if args.out is None else out_folder(args.out)
        if args.formula is not None:
            from analysis.gamm.formula import parse_formula

            parse_formula(args.formula)  # a bad formula is refused before the file is read
        data = read_csv(Path(args.input), gamm_input(args.distance, args.participant))
        data.attrs["source"] = args.input
        if args.formula is not None:
            fit = fit_gamm(args.formula, data, method=args.method, memory_limit=args.memory_limit)
        else:
            fit = fit_gamm(
                data,
                args.outcome,
                args.distance,
                args.participant,
                args.basis,
                args.k,
                method=args.method,
                memory_limit=args.memory_limit,
            )
    except (CliError, GammInputError) as exc:
        return fail(f"{args.input}: {exc}" if isinstance(exc, GammInputError) else str(exc))
    except np.linalg.LinAlgError as exc:
        return fail(f"{args.input}: the model is numerically singular for these data ({exc})")
    summary = fit.summary_dict()
    if out is None:
        print(json.dumps(summary, indent=2))
        return 0
    out.mkdir(exist_ok=True)
    (out / GAMM_JSON).write_text(json.dumps(summary, indent=2) + "\n")
    text = str(fit.summary())
    (out / GAMM_TEXT).write_text(text + "\n")
    print(text)
    print(f"wrote {out / GAMM_JSON}, {out / GAMM_TEXT}")
    return 0


def register(subparsers) -> None:
    g = add_command(
        subparsers,
        "gamm",
        run_gamm,
        help="fit one GAMM to a CSV of ratings, as mgcv would, and print its summary",
        description="Fit a GAMM by REML or ML (as R's mgcv) and report mgcv's summary: either "
        "a model in mgcv's formula syntax (--formula), or the seed study's "
        "OUTCOME ~ s(DISTANCE) + s(participant, bs='re') + s(participant, DISTANCE, bs='re'). "
        "Without --out the summary is printed as JSON.",
        writes=f"{GAMM_JSON} (the summary's numbers) and {GAMM_TEXT}",
        out_required=False,
        json_note=True,
    )
    g.add_argument(
        "--input", required=True, help="CSV with one row per rating (e.g. evaluations.csv)"
    )
    g.add_argument(
        "--formula",
        help="model in mgcv syntax, e.g. \"y ~ strategy + s(x, by = strategy) + s(uid, bs = 're')\"",
    )
    g.add_argument("--outcome", help="rating column (integers 1..7; without --formula)")
    g.add_argument("--distance", help="distance column (the smooth's covariate)")
    g.add_argument(
        "--participant", help=f"participant id column (default {PARTICIPANT}, as in the export)"
    )
    g.add_argument("--basis", choices=("tp", "cr"), default="tp", help="spline basis (mgcv bs)")
    g.add_argument("--k", type=int, default=10, help="basis dimension (default 10)")
    g.add_argument("--method", choices=("REML", "ML"), default="REML", help="mgcv's method")
    g.add_argument(
        "--memory-limit",
        metavar="SIZE",
        help="refuse a fit whose memory estimate exceeds SIZE (e.g. 6GB, 800MB; default "
        f"${ENV_VAR} if set, else 80%% of physical memory)",
    )
