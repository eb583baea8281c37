"""`recourse-analysis power`: power of the registered GAMM's tests by simulation, over a grid
of participant numbers, from stated effects (`--effects`) or a pilot export (`--pilot`).

Every argument, the effects file and the test names are checked (and a pilot's model fitted)
before any replicate runs; bad input writes nothing."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from analysis.cli.common import CliError, add_command, fail, out_folder
from analysis.grid import CellError, GridError, check_scheduler, tqdm_progress
from recourse_engine.cli import non_negative_int, positive_int


def _grid(text: str) -> list[int]:
    values = []
    for part in text.split(","):
        part = part.strip()
        try:
            values.append(int(part))
        except ValueError:
            raise CliError(f"--participants: {part!r} is not a whole number") from None
    return values


def _fraction(name: str, value: float) -> float:
    if not 0 < value < 1:
        raise CliError(f"{name}: must lie between 0 and 1, got {value:g}")
    return value


def _plan(args: argparse.Namespace):
    """(plan, settings for power.json) from the arguments; everything checked."""
    from analysis.power import StatedModel, default_formula, load_pilot, load_spec, make_plan

    if (args.effects is None) == (args.pilot is None):
        raise CliError("give --effects FILE (stated effects) or --pilot EXPORT, one of them")
    if args.effects is not None:
        if args.outcome is not None or args.distance is not None:
            raise CliError("--outcome/--distance go with --pilot; the effects file names them")
        spec = load_spec(args.effects)
        formula = args.formula or spec.model or default_formula(spec)
        model = StatedModel(spec)
        tests = args.test or spec.tests
        field = "--formula" if args.formula else f"{args.effects}: effects.model"
        tests_field = "--test" if args.test else f"{args.effects}: effects.tests"
        source: dict[str, Any] = {"effects": str(args.effects)}
    else:
        model, fit, formula = load_pilot(
            args.pilot, outcome=args.outcome, distance=args.distance, formula=args.formula
        )
        tests, field, tests_field = args.test, "--formula", "--test"
        source = {
            "pilot": str(args.pilot),
            "pilot_fit": {
                "participants": len(model.members),
                "ratings": int(fit.n),
                "residual_sd": model.residual_sd,
                "random_sd": {f"s({r.group}{',' + r.covariate if r.covariate else ''})": r.sd
                              for r in model.random},
                "parametric": {k: v["estimate"] for k, v in fit.parametric.items()},
            },
        }  # fmt: skip
    plan = make_plan(model, formula, tests, args.seed, formula_field=field, tests_field=tests_field)
    return plan, source


def _run(args: argparse.Namespace) -> int:
    from analysis.power import check_grid, run_replicates, smallest_n, summarise
    from analysis.power.report import write_outputs

    grid = check_grid(_grid(args.participants), args.replicates)
    _fraction("--alpha", args.alpha)
    _fraction("--target", args.target)
    _fraction("--level", args.level)
    if args.scheduler is not None:
        check_scheduler(args.scheduler)
        if args.workers is not None:
            raise CliError("--workers and --scheduler: give one (a cluster has its own workers)")
    out = out_folder(args.out)
    plan, source = _plan(args)
    progress = None if args.no_progress else tqdm_progress("power", unit="replicate")
    table = run_replicates(
        plan, grid, args.replicates, scheduler=args.scheduler, workers=args.workers,
        progress=progress,
    )  # fmt: skip
    summary = summarise(table, plan.tests, args.alpha, args.interval, args.level)
    smallest = smallest_n(summary, args.target)
    settings = {
        **source,
        "formula": plan.formula,
        "tests": list(plan.tests),
        "participants": grid,
        "replicates": args.replicates,
        "seed": args.seed,
        "alpha": args.alpha,
        "target": args.target,
        "interval": args.interval,
        "level": args.level,
    }
    written = write_outputs(
        out, summary, table, settings, smallest, args.target, args.figure_format
    )
    for test, found in smallest.items():
        n, sure = found["estimate"], found["lower_bound"]
        print(
            f"{test}: power "
            + (f"reaches {args.target:g} at N = {n}" if n else f"stays below {args.target:g}")
            + (f"; its interval's lower bound at N = {sure}" if sure else "")
            + (" on this grid" if not sure else "")
        )
    print("wrote " + ", ".join(str(p) for p in written))
    return 0


def run_power_command(args: argparse.Namespace) -> int:
    from analysis.power import PowerInputError

    try:
        return _run(args)
    except (CliError, PowerInputError, GridError, CellError) as exc:
        return fail(str(exc))
    except np.linalg.LinAlgError as exc:  # a pilot whose model is singular
        return fail(f"the registered model is numerically singular for the pilot ({exc})")


def register(subparsers: Any) -> None:
    p = add_command(
        subparsers,
        "power",
        run_power_command,
        help="power of the registered GAMM's tests by simulation, over participant numbers",
        description="Simulate studies from stated effects (--effects, JSON or YAML) or from a "
        "pilot export and its fitted model (--pilot), fit the registered GAMM to each "
        "replicate, and report the power of each test with Monte Carlo intervals, the power "
        "curve and the smallest N reaching --target (docs/power.md).",
        writes="power.csv, replicates.csv, power.json and power_curve.png (or .pdf)",
        progress=True,
    )
    p.add_argument("--effects", type=Path, help="stated effects (JSON or YAML; docs/power.md)")
    p.add_argument("--pilot", type=Path, help="pilot study export (folder or the console's ZIP)")
    p.add_argument("--outcome", help="with --pilot: the rating column of the seed GAMM")
    p.add_argument("--distance", help="with --pilot: the distance of the seed GAMM's smooth")
    p.add_argument(
        "--formula",
        help="the registered model in mgcv's syntax (default: the effects file's model, or "
        "the seed GAMM of --outcome and --distance)",
    )
    p.add_argument(
        "--participants", required=True, metavar="N,N,...", help="grid, e.g. 50,100,200,400"
    )
    p.add_argument("--replicates", type=positive_int, default=200, help="per grid point")
    p.add_argument(
        "--test",
        action="append",
        metavar="NAME",
        help="a test (repeatable): a coefficient (strategyrandom), a term (s(proximity)) or "
        "ordinal; default: every contrast and smooth",
    )
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (0.05)")
    p.add_argument("--target", type=float, default=0.8, help="target power (0.8)")
    p.add_argument("--seed", type=non_negative_int, default=1, help="cell seeds: (seed, N, r)")
    p.add_argument("--interval", choices=("wilson", "clopper-pearson"), default="wilson")
    p.add_argument("--level", type=float, default=0.95, help="interval level (0.95)")
    p.add_argument("--figure-format", choices=("png", "pdf"), default="png")
    p.add_argument(
        "--workers",
        type=positive_int,
        help="replicates on a Dask LocalCluster of N worker processes (default: in this one)",
    )
    p.add_argument(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="replicates on the Dask cluster of this scheduler (docs/deploy.md)",
    )
