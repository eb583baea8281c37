"""`python -m analysis reproduce`: Gao & Lakkaraju (2023), Table 6, beside this project's
experiment under three settings (`analysis.experiment.report`)."""

from __future__ import annotations

import argparse
from typing import Any

from analysis.cli.common import CliError, add_command, fail, out_folder
from recourse_engine.cli import positive_int


def register(subparsers: Any) -> None:
    from analysis.experiment.paper import TABLE6

    r = add_command(
        subparsers,
        "reproduce",
        run_reproduce_command,
        help="Gao & Lakkaraju (2023) Table 6 beside gao2023, gao2023 + defects and sound",
        description="Run the experiment on one of the paper's data sets under --preset "
        "gao2023, gao2023 with --replicate-published-defects, and the sound default, and "
        "write report.md: the paper's Table 6 row beside each, with paired differences.",
        writes="gao2023/, gao2023_defects/, sound/, report.md and timing.json",
        progress=True,
    )
    r.add_argument("--dataset", required=True, choices=sorted(TABLE6))
    r.add_argument("--methods", default="ebr,ibr,wachter,gs,cchvae,cruds")
    r.add_argument(
        "--runs",
        type=positive_int,
        default=10,
        help="runs per setting (10: a t interval over runs, Holm-controlled verdicts)",
    )
    r.add_argument("--epochs", type=positive_int, default=15, help="VAE methods' epochs (15)")
    r.add_argument("--batch", type=positive_int, default=128, help="VAE methods' batch (128)")
    r.add_argument(
        "--threads",
        type=positive_int,
        default=1,
        help="threads of BLAS, OpenMP and torch (1: the fastest on a shared machine, and "
        "numbers that do not depend on the core count)",
    )


def run_reproduce_command(args: argparse.Namespace) -> int:
    from analysis.experiment.report import reproduce
    from analysis.experiment.run import parse_methods

    try:
        methods = parse_methods(args.methods)
        out = out_folder(args.out)
    except (CliError, ValueError) as exc:
        return fail(str(exc))
    out.mkdir(exist_ok=True)
    training = {"epochs": args.epochs, "batch": args.batch}
    seconds = reproduce(
        args.dataset, out, runs=args.runs, methods=methods, training=training, threads=args.threads
    )
    print(f"{args.dataset}: {out / 'report.md'} ({sum(seconds.values()):.0f} s)")
    return 0
