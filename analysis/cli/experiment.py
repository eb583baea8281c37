"""`python -m analysis experiment`: the seed paper's segregation experiment per method.

The engine's `python -m recourse_engine experiment` forwards here (the engine may not import
`analysis`); flags, files and messages are those it had. Every argument is checked before
any run, so a bad one writes nothing.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from analysis.cli.common import CliError, add_command, fail, out_folder
from analysis.grid import CellError, check_scheduler
from analysis.significance import BOOTSTRAP
from recourse_engine.cli import non_negative_int, positive_int

#: the flags that override the preset's setting of the same name (None: the preset's)
SETTING_FLAGS = (
    "index_space", "scaling", "population", "train_share", "classifier", "eps_quantile",
    "eps_pairs", "eps_comparison", "clusters", "kmeans_inits", "kmeans_seed",
    "people_resamples", "factual_cap", "holdout",
)  # fmt: skip


def register(subparsers: Any) -> None:
    e = add_command(
        subparsers,
        "experiment",
        run_experiment_command,
        help="segregation before/after recourse, per method",
        description="Run recourse methods on a dataset and compare the segregation indices "
        "of the population before and after every rejected person takes their recourse.",
        writes="settings.json, runs.csv, factuals.csv, results.csv, results.md, figure.png, "
        "split.csv (held-out rows), audits.csv (FACTS subgroup audit) and fair_effects.csv",
        progress=True,
        legacy_quiet=True,
    )
    e.add_argument("--dataset", default="synthetic")
    e.add_argument("--methods", default="ebr,ibr,wachter,gs,cchvae,cruds")
    e.add_argument("--runs", type=positive_int, default=5)
    e.add_argument("--seed", type=non_negative_int, default=0, help="run r uses seed + r")
    e.add_argument(
        "--epochs", type=positive_int, help="training epochs of the methods that have them"
    )
    e.add_argument(
        "--batch",
        type=positive_int,
        help="minibatch size of the methods that have one (cchvae, ibr, cruds; fair_rl's SAC)",
    )
    e.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="METHOD.KEY=VALUE",
        help="a method parameter (VALUE read as JSON, else as text), e.g. "
        "fair_rl.reward=group_ee or fair_rl/c4.clusters=4; repeatable",
    )
    e.add_argument(
        "--subsample",
        type=positive_int,
        default=10_000,
        help="rows per run of a larger real dataset (default 10000, as in the paper)",
    )
    e.add_argument(
        "--preset",
        choices=("sound", "gao2023"),
        default="sound",
        help="sound (default) or gao2023: the authors' index space, ε, K-Means, split, "
        "classifier and method settings (docs/methods.md)",
    )
    e.add_argument(
        "--replicate-published-defects",
        action="store_true",
        help="reproduce defects (a)-(c) of the authors' code, for matching published numbers "
        "only; every table says so",
    )
    e.add_argument("--index-space", choices=("all", "mutable"))
    e.add_argument("--scaling", choices=("clipped", "minmax"))
    e.add_argument("--population", choices=("all", "train"), help="all rows or the training split")
    e.add_argument("--train-share", type=float, help="training split's share (default 0.75)")
    e.add_argument("--classifier", choices=("project", "carla_ann"))
    e.add_argument("--eps-quantile", type=float)
    e.add_argument("--eps-pairs", choices=("distinct", "ordered_with_self"))
    e.add_argument("--eps-comparison", choices=("<=", "<"))
    e.add_argument("--clusters", type=positive_int, help="K-Means clusters (30)")
    e.add_argument("--kmeans-inits", type=positive_int, help="K-Means starts")
    e.add_argument("--kmeans-seed", type=non_negative_int, help="K-Means seed (default: run's)")
    e.add_argument(
        "--people-resamples",
        type=non_negative_int,
        help="resamples of the bootstrap over people that gives the paired differences' "
        f"interval below 10 runs (default {BOOTSTRAP}; 0: a t interval over runs)",
    )
    e.add_argument(
        "--holdout",
        type=float,
        help="share of the rows set aside: methods are fitted on the rest and scored on the "
        "held-out rejected (default 0.25 in sound, 0 = in-sample in gao2023)",
    )
    e.add_argument(
        "--no-fair-audits",
        action="store_true",
        help="skip the FACTS subgroup audit and the counterfactual-twin rates",
    )
    e.add_argument(
        "--workers",
        type=positive_int,
        help="run the cells (run × method) on a Dask LocalCluster of N worker processes on "
        "this machine (default, or 1: one at a time in this process); the files are the same",
    )
    e.add_argument(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="run the cells on the Dask cluster of this scheduler (`dask scheduler`, "
        "docs/deploy.md); its workers need this project installed",
    )
    e.add_argument(
        "--factual-cap",
        type=positive_int,
        help="factuals per run that get CARLA's robustness invalidation and redundancy "
        "(default 500)",
    )


def run_experiment_command(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except (CliError, ValueError, CellError) as exc:  # the engine's are ValueErrors
        return fail(str(exc))


def parse_params(items: list[str], methods: list[str]) -> dict[str, dict[str, Any]]:
    """--param METHOD.KEY=VALUE items by method label; VALUE as JSON when it parses."""
    out: dict[str, dict[str, Any]] = {}
    for item in items:
        left, eq, value = item.partition("=")
        label, dot, key = left.rpartition(".")
        if not eq or not dot or not label or not key:
            raise CliError(f"--param {item!r}: expected METHOD.KEY=VALUE")
        if label not in methods:
            raise CliError(f"--param {item!r}: {label!r} is not one of --methods")
        try:
            parsed: Any = json.loads(value)
        except ValueError:
            parsed = value
        out.setdefault(label, {})[key] = parsed
    return out


def _run(args: argparse.Namespace) -> int:
    from analysis.experiment.run import make_method, parse_methods, run_experiment
    from analysis.experiment.settings import merge_params, preset
    from recourse_engine.datasets import DATASETS

    if args.dataset not in DATASETS:
        raise CliError(f"unknown dataset {args.dataset!r}; known: {', '.join(DATASETS)}")
    methods = parse_methods(args.methods)
    params = parse_params(args.param, methods)
    out = out_folder(args.out)
    training = {"epochs": args.epochs, "batch": args.batch}
    settings = preset(args.preset).with_(
        **{name: getattr(args, name) for name in SETTING_FLAGS},
        replicate_defects=args.replicate_published_defects or None,
        fair_audits=False if args.no_fair_audits else None,
    )
    params = merge_params(settings.method_params(args.dataset), params, methods, training)
    for label in methods:  # a bad parameter is refused before any run
        make_method(label, args.seed, params.get(label), training)
    if args.scheduler is not None:
        check_scheduler(args.scheduler)
        if args.workers is not None:
            raise CliError("--workers and --scheduler: give one (a cluster has its own workers)")
    run_experiment(  # creates --out once every cell is back
        args.dataset,
        methods,
        args.runs,
        out,
        seed=args.seed,
        progress=not args.no_progress,
        params=params,
        training=training,
        subsample=args.subsample,
        settings=settings,
        scheduler=args.scheduler,
        workers=args.workers,
        record={"arguments": {k: v for k, v in vars(args).items() if k != "func"}},
    )
    print(
        f"{args.runs} runs of {', '.join(methods)} on {args.dataset}: "
        f"{out / 'settings.json'}, {out / 'runs.csv'}, {out / 'factuals.csv'}, "
        f"{out / 'results.csv'}, "
        f"{out / 'results.md'}, {out / 'figure.png'}, {out / 'audits.csv'}, "
        f"{out / 'fair_effects.csv'}" + (f", {out / 'split.csv'}" if settings.holdout else "")
    )
    return 0
