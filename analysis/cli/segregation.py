"""`recourse-analysis segregation`: the exact segregation indices of a population in a CSV
file (every index of `analysis.segregation.catalogue`).

Every argument and file is checked before anything is computed or written; a bad
one ends the command with exit status 2 and a one-line `error:` message.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.cli.common import (
    CliError,
    add_command,
    fail,
    out_folder,
    progress_bar,
    read_csv,
    refuse_json_flag,
)
from analysis.segregation.catalogue import CATALOGUE
from analysis.table_schemas import check_table, population

#: the files `segregation --out DIR` writes
INDICES_JSON, INDICES_CSV = "indices.json", "indices.csv"


def register(subparsers: Any) -> None:
    labels = ", ".join(ix.label for ix in CATALOGUE.values())
    p = add_command(
        subparsers,
        "segregation",
        run_segregation,
        help="exact segregation indices of a population in a CSV file",
        description=f"The indices ({labels}) of the two groups in a CSV file, computed "
        "exactly on all rows.",
        writes=f"{INDICES_JSON} and {INDICES_CSV}",
        progress=True,
        json_note=True,
    )
    p.add_argument("--input", required=True, type=Path, help="CSV file, one row per person")
    p.add_argument("--group", required=True, help="column with the binary group")
    p.add_argument("--features", required=True, help="comma-separated numeric feature columns")
    p.add_argument("--units", help="column with neighbourhood labels (default: KMeans)")
    eps = p.add_mutually_exclusive_group()
    eps.add_argument("--eps", type=float, help="centralization radius (default: a quantile)")
    eps.add_argument(
        "--eps-quantile", type=float, default=0.2, help="quantile of minority distances (0.2)"
    )
    p.add_argument(
        "--eps-with-self-pairs",
        action="store_true",
        help="take the quantile over all ordered minority pairs including self-distances, as "
        "the seed paper's published code does (it used --eps-quantile 0.1)",
    )
    p.add_argument("--minority", help="value of --group that is the minority (default: smaller)")
    p.add_argument("--clusters", type=int, default=30, help="KMeans neighbourhoods (30)")
    p.add_argument("--seed", type=int, default=0, help="seed for KMeans and sampling (0)")
    p.add_argument(
        "--backend",
        choices=("numpy", "numba", "torch", "auto"),
        default="auto",
        help="numpy: blocks on the CPU cores; numba: numpy's, with the pair passes compiled "
        "kernels; torch: torch blocks on --device; auto: torch on the GPU when torch sees "
        "one (or on --device), else numba where installed, else numpy (auto)",
    )
    p.add_argument("--device", help="torch device, e.g. cuda (--backend torch or auto)")
    p.add_argument("--jobs", type=int, help="CPU threads for the numpy backend (all cores)")


def read_population(
    path: Path, group: str, features: list[str], units: str | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Read the CSV and check it against its declared schema (`analysis.table_schemas.population`):
    the named columns exist, the features are finite numbers, no gaps."""
    if len(set(features)) != len(features):
        raise CliError("--features names a column twice")
    if group in features:
        raise CliError(f"--group column {group!r} is also a feature")
    frame = read_csv(path)
    if frame.empty:
        raise CliError(f"{path}: no data rows")
    wanted = [group, *features] + ([units] if units else [])
    missing = [c for c in wanted if c not in frame.columns]
    if missing:
        raise CliError(
            f"{path}: unknown column(s) {', '.join(missing)}; columns are "
            f"{', '.join(map(str, frame.columns))}"
        )
    problem = check_table(frame, population(group, features, units), str(path))
    if problem is not None:
        raise CliError(problem)
    cols = [pd.to_numeric(frame[c]).to_numpy(dtype=float) for c in features]
    g = frame[group].to_numpy()
    u = frame[units].to_numpy() if units else None
    return np.column_stack(cols), g, u


def run_segregation(args: argparse.Namespace) -> int:
    from analysis.segregation.indices import SegregationInputError, segregation_indices

    try:
        features = [f.strip() for f in args.features.split(",") if f.strip()]
        if not features:
            raise CliError("--features is empty")
        if args.clusters < 1:
            raise CliError(f"--clusters must be >= 1, got {args.clusters}")
        if args.eps is not None and not (math.isfinite(args.eps) and args.eps >= 0):
            raise CliError(f"--eps must be a finite number >= 0, got {args.eps}")
        if not 0.0 <= args.eps_quantile <= 1.0:
            raise CliError(f"--eps-quantile must be in [0, 1], got {args.eps_quantile}")
        if args.jobs is not None and args.jobs < 1:
            raise CliError(f"--jobs must be >= 1, got {args.jobs}")
        if args.device and args.backend in ("numpy", "numba"):
            raise CliError("--device needs --backend torch or auto")
        refuse_json_flag(args, INDICES_JSON)
        out = out_folder(args.out)
        X, g, u = read_population(args.input, args.group, features, args.units)
        result = segregation_indices(
            X,
            g,
            minority=args.minority,
            eps=args.eps,
            eps_quantile=args.eps_quantile,
            eps_pairs="ordered_with_self" if args.eps_with_self_pairs else "distinct",
            units=u,
            clusters=args.clusters,
            seed=args.seed,
            backend=args.backend,
            device=args.device,
            n_jobs=args.jobs,
            progress=None if args.no_progress else progress_bar(),
        )
    except (CliError, SegregationInputError) as exc:
        return fail(str(exc))
    except ImportError as exc:
        return fail(f"backend {args.backend!r} is not available ({exc})")
    except RuntimeError as exc:  # e.g. an unknown or unavailable torch device
        return fail(str(exc).splitlines()[0])
    payload = result.to_json()
    out.mkdir(exist_ok=True)
    (out / INDICES_JSON).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    result.to_frame().to_csv(out / INDICES_CSV, index=False)
    print(json.dumps(payload))
    print(f"wrote {out / INDICES_JSON}, {out / INDICES_CSV}")
    return 0
