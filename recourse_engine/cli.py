"""`recourse-engine` (or `python -m recourse_engine`): synthetic pools, recourses for
profiles from a pool, and decision models, on the command line.

Every input is checked before anything is written; errors print one line naming
the file, row and column and exit with status 2. `--out` is always a folder (see
`recourse_engine.cli_convention`); files are written to a temporary file beside their
target and renamed, so a failed run leaves nothing.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from .cli_convention import (
    ArgumentParser,
    OutFolderError,
    add_command,
    check_out_folder,
    prog,
    write_atomic,
)
from .decision import (
    IncomeRule,
    ModelError,
    load_model,
    save_model,
    train_sklearn_model,
    train_torch_mlp,
)
from .design import DesignError, parse_design
from .pool import PoolError, read_pool_csv
from .schema import FeatureSchema, SchemaError, carloan_schema, load_schema
from .selection import PoolIndex, select_many
from .synth import synth_pool

MOVED_NOTE = (
    "note: `recourse-engine experiment` has moved to `recourse-analysis experiment` "
    "(`python -m analysis experiment`); running it there"
)
#: the file each command writes inside --out
POOL_NAME = "pool"
RECOURSES_FILE = "recourses.csv"
COVERAGE_FILE = "coverage.csv"
MODEL_FILES = {"logistic": "model.joblib", "mlp": "model.joblib", "torch": "model.pt"}


class CliError(Exception):
    pass


def _schema(path: str | None) -> FeatureSchema:
    return carloan_schema() if path is None else load_schema(path)


def _out_folder(path: Path) -> Path:
    try:
        return check_out_folder(path)
    except OutFolderError as exc:
        raise CliError(str(exc)) from None


def non_negative_int(text: str) -> int:
    """argparse type: a seed or count of 0 or more (also used by `python -m analysis`)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text!r}")
    return value


def positive_int(text: str) -> int:
    """argparse type: a count of 1 or more."""
    value = non_negative_int(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def cmd_recourses(args: argparse.Namespace) -> int:
    schema = _schema(args.schema)
    design = parse_design(args.design)
    folder = _out_folder(args.out)
    out, coverage_out = folder / RECOURSES_FILE, folder / COVERAGE_FILE
    pool = read_pool_csv(args.pool, schema)
    profiles = read_pool_csv(args.profiles, schema)
    model = IncomeRule() if args.model is None else load_model(args.model, schema)
    index = PoolIndex(schema, pool, model)
    progress = None
    if len(profiles) > 1 and not args.no_progress:
        progress = lambda rows: tqdm(  # noqa: E731
            rows, desc="profiles", unit="profile", file=sys.stderr, disable=None
        )
    selections = select_many(index, profiles, design, seed=args.seed, progress=progress)

    rows, cov = [], []
    for pid, sel in zip(profiles.ids, selections, strict=True):
        cov.append(
            {
                "profile_id": pid,
                "requested": sel.requested,
                "found": len(sel.picks),
                "shortfall": sel.shortfall,
                "admissible": sel.n_admissible,
            }
        )
        for p in sel.picks:
            row = {
                "profile_id": pid,
                "strategy": p.strategy,
                "pool_id": p.pool_id,
                "sparsity": p.sparsity,
                "proximity": round(p.proximity, 12),
                "changed": ";".join(p.changed),
            }
            if pool.income is not None:
                inc = float(pool.income[p.pool_index])
                row["income"] = int(inc) if inc.is_integer() else inc
            for it, code in zip(schema.items, p.codes, strict=True):
                row[it.key] = code if it.is_numeric else int(code)
            rows.append(row)
    columns = ["profile_id", "strategy", "pool_id", "sparsity", "proximity", "changed"]
    columns += (["income"] if pool.income is not None else []) + schema.keys
    frame = pd.DataFrame(rows, columns=columns)
    write_atomic(out, lambda p: frame.to_csv(p, index=False))
    write_atomic(coverage_out, lambda p: pd.DataFrame(cov).to_csv(p, index=False))
    short = [c for c in cov if c["shortfall"]]
    print(
        f"{len(profiles)} profiles, {len(frame)} recourses written to {out} "
        f"(coverage: {coverage_out}); {len(profiles) - len(short)} fully covered, "
        f"{len(short)} short ({sum(c['shortfall'] for c in short)} recourses missing)",
        file=sys.stderr,
    )
    return 0


def cmd_synth_pool(args: argparse.Namespace) -> int:
    schema = _schema(args.schema)
    if not args.name or Path(args.name).name != args.name or args.name.startswith("."):
        raise CliError(f"--name {args.name!r}: give a plain file name without a folder")
    out = _out_folder(args.out) / f"{args.name.removesuffix('.csv')}.csv"
    try:
        frame = synth_pool(schema, n=args.n, seed=args.seed)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    write_atomic(out, lambda p: frame.to_csv(p, index=False))
    print(f"{len(frame)} synthetic profiles written to {out}", file=sys.stderr)
    return 0


def cmd_train_model(args: argparse.Namespace) -> int:
    schema = _schema(args.schema)
    out = _out_folder(args.out) / MODEL_FILES[args.kind]
    pool = read_pool_csv(args.pool, schema, require_income=args.use_income)
    if args.kind == "torch":
        model = train_torch_mlp(
            schema, pool, args.label, use_income=args.use_income, seed=args.seed
        )
    else:
        model = train_sklearn_model(
            schema, pool, args.label, kind=args.kind, use_income=args.use_income, seed=args.seed
        )
    write_atomic(out, lambda p: save_model(model, p))
    acc = (model.approves(pool.codes, pool.income) == pool.extra[args.label].astype(bool)).mean()
    print(
        f"{model.name} trained on {len(pool)} rows (training accuracy {acc:.3f}) -> {out}",
        file=sys.stderr,
    )
    return 0


def cmd_experiment_moved(rest: list[str]) -> int:
    """`experiment` moved to `python -m analysis experiment` (it measures the methods with
    analysis's segregation indices, and the engine never imports analysis): say so, then
    run it there in a child interpreter and hand back its exit status."""
    print(MOVED_NOTE, file=sys.stderr, flush=True)
    return subprocess.call([sys.executable, "-m", "analysis", "experiment", *rest])


DESCRIPTION = """Synthetic pools, recourses for profiles from a pool, and decision models.
--out is always a folder (created if missing); each command names the files it writes
inside it. Bad input stops the command with one 'error:' line, exit status 2, and nothing
written."""


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog=prog("recourse_engine"), description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = add_command(
        sub,
        "synth-pool",
        cmd_synth_pool,
        help="write a seeded synthetic car-loan pool (or profiles to find recourses for)",
        description="Draw profiles from the synthetic car-loan model (recourse_engine/synth.py).",
        writes="NAME.csv",
    )
    s.add_argument("--schema", help="schema JSON (default: the built-in car-loan schema)")
    s.add_argument("--n", type=positive_int, default=3683, help="number of profiles (3683)")
    s.add_argument("--seed", type=non_negative_int, default=0)
    s.add_argument("--name", default=POOL_NAME, help=f"file name inside --out ({POOL_NAME})")

    r = add_command(
        sub,
        "recourses",
        cmd_recourses,
        help="select recourses for profiles from a pool",
        description="For each profile, pick the design's recourses among the admissible pool "
        "profiles (approved by the decision model, every constraint held).",
        writes=f"{RECOURSES_FILE} (one row per recourse) and {COVERAGE_FILE} (shortfall per "
        "profile)",
        progress=True,
        legacy_quiet=True,
    )
    r.add_argument("--schema", help="schema JSON (default: the built-in car-loan schema)")
    r.add_argument("--pool", required=True, help="pool CSV: id, income, one column per item")
    r.add_argument("--profiles", required=True, help="profiles CSV in the pool's format")
    r.add_argument(
        "--design",
        default="sparsest:1,proximate:1,random:3",
        help="strategies and counts (default sparsest:1,proximate:1,random:3)",
    )
    r.add_argument("--model", help="saved decision model (default: the 4/3 income rule)")
    r.add_argument("--seed", type=non_negative_int, default=0)

    t = add_command(
        sub,
        "train-model",
        cmd_train_model,
        help="train a decision model on a pool with a 0/1 label",
        description="Train a logistic, scikit-learn MLP or torch MLP decision model; use it "
        "with `recourses --model`.",
        writes="model.joblib (model.pt for --kind torch)",
    )
    t.add_argument("--schema", help="schema JSON (default: the built-in car-loan schema)")
    t.add_argument("--pool", required=True, help="pool CSV with the label column")
    t.add_argument("--label", required=True, help="name of the 0/1 label column")
    t.add_argument("--kind", choices=("logistic", "mlp", "torch"), default="logistic")
    t.add_argument("--use-income", action="store_true", help="also use log income as a feature")
    t.add_argument("--seed", type=non_negative_int, default=0)

    # listed for one release; main() forwards it before parsing (see cmd_experiment_moved)
    sub.add_parser(
        "experiment",
        add_help=False,
        help="segregation before/after recourse per method: moved to "
        "`recourse-analysis experiment`, forwarded there",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["experiment"]:
        return cmd_experiment_moved(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except (CliError, SchemaError, PoolError, DesignError, ModelError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
