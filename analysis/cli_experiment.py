"""`python -m analysis experiment`: the seed paper's segregation experiment per method.

The engine's `python -m recourse_engine experiment` forwards here (the engine may not import
`analysis`); flags, files and messages are those it had. Every argument is checked before
any run, so a bad one writes nothing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from analysis.cli_common import CliError, fail
from recourse_engine.cli import non_negative_int, positive_int


def register(subparsers: Any) -> None:
    e = subparsers.add_parser(
        "experiment",
        help="segregation before/after recourse, per method",
        description="Run recourse methods on a dataset and compare the segregation indices "
        "of the population before and after every rejected person takes their recourse.",
    )
    e.add_argument("--dataset", default="synthetic")
    e.add_argument("--methods", default="ebr,ibr,wachter,gs,cchvae,cruds")
    e.add_argument("--runs", type=positive_int, default=5)
    e.add_argument("--seed", type=non_negative_int, default=0, help="run r uses seed + r")
    e.add_argument("--epochs", type=positive_int, help="training epochs of cchvae, ibr, cruds")
    e.add_argument("--batch", type=positive_int, help="minibatch size of cchvae, ibr, cruds")
    e.add_argument("--out", required=True, help="output folder (created if missing)")
    e.add_argument("--quiet", action="store_true", help="no progress bars")
    e.set_defaults(func=run_experiment_command)


def run_experiment_command(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except (CliError, ValueError) as exc:  # the engine's input errors are ValueErrors
        return fail(str(exc))


def _run(args: argparse.Namespace) -> int:
    from analysis.experiment import parse_methods, run_experiment
    from recourse_engine.datasets import DATASETS

    if args.dataset not in DATASETS:
        raise CliError(f"unknown dataset {args.dataset!r}; known: {', '.join(DATASETS)}")
    methods = parse_methods(args.methods)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise CliError(f"{out}: exists and is not a folder")
    if not out.parent.exists():
        raise CliError(f"{out.parent}: output folder's parent does not exist")
    out.mkdir(exist_ok=True)
    run_experiment(args.dataset, methods, args.runs, out, seed=args.seed, progress=not args.quiet)
    print(
        f"{args.runs} runs of {', '.join(methods)} on {args.dataset}: "
        f"{out / 'results.csv'}, {out / 'results.md'}, {out / 'figure.png'}",
        file=sys.stderr,
    )
    return 0
