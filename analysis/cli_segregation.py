"""`recourse-analysis segregation` and `recourse-analysis effects`.

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

from analysis.cli_common import (
    CliError,
    add_json_flag_note,
    add_out_folder,
    add_progress_flag,
    fail,
    out_folder,
    read_csv,
    refuse_json_flag,
)

#: the files `segregation --out DIR` and `effects --out DIR` write (besides the report)
INDICES_JSON, INDICES_CSV = "indices.json", "indices.csv"
EFFECTS_JSON, EFFECTS_CSV = "effects.json", "effects.csv"


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "segregation",
        help="exact segregation indices of a population in a CSV file",
        description="Centralization, Atkinson index and average spatial proximity of the two "
        "groups in a CSV file, computed exactly on all rows.",
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
    p.add_argument("--backend", choices=("numpy", "torch"), default="numpy")
    p.add_argument("--device", help="torch device, e.g. cuda (torch backend only)")
    p.add_argument("--jobs", type=int, help="CPU threads for the numpy backend (all cores)")
    add_out_folder(p, f"{INDICES_JSON} and {INDICES_CSV}")
    add_progress_flag(p)
    add_json_flag_note(p)
    p.set_defaults(func=run_segregation)

    e = subparsers.add_parser(
        "effects",
        help="segregation effects of the recourses shown in a study export",
        description="Indices of the participants' profiles before and after implementing the "
        "recourse of each strategy, with bootstrap intervals, partial compliance, and a report.",
    )
    e.add_argument(
        "--export", required=True, type=Path, help="study export: a folder or the console's ZIP"
    )
    e.add_argument("--group", required=True, help="participants.csv column with the group")
    e.add_argument("--groups", help="two values of --group to keep, comma-separated")
    e.add_argument("--minority", help="value of --group that is the minority (default: smaller)")
    e.add_argument(
        "--schema",
        type=Path,
        help="schema JSON (default: the export's schema.json, else the built-in car-loan schema)",
    )
    add_out_folder(e, f"report.html, its figures, {EFFECTS_JSON} and {EFFECTS_CSV}")
    e.add_argument("--eps-quantile", type=float, default=0.2)
    e.add_argument("--clusters", type=int, default=30)
    e.add_argument("--bootstrap", type=int, default=200, help="participant bootstrap draws")
    e.add_argument("--draws", type=int, default=200, help="partial-compliance Monte-Carlo draws")
    e.add_argument(
        "--compliance",
        choices=("rating", "gamm"),
        default="rating",
        help="probability of implementing: (action-1)/6 of the participant's own rating, or "
        "the fitted GAMM's predicted action rating mapped the same way",
    )
    e.add_argument("--seed", type=int, default=0)
    add_progress_flag(e)
    e.set_defaults(func=run_effects)


def read_population(
    path: Path, group: str, features: list[str], units: str | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Read and check the CSV: named columns exist, features are finite numbers, no gaps."""
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
    if len(set(features)) != len(features):
        raise CliError("--features names a column twice")
    if group in features:
        raise CliError(f"--group column {group!r} is also a feature")
    cols = []
    for c in features:
        v = pd.to_numeric(frame[c], errors="coerce").to_numpy(dtype=float)
        bad = ~np.isfinite(v)
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            raw = frame[c].iloc[r]
            got = "an empty cell" if pd.isna(raw) else repr(str(raw))
            raise CliError(
                f"{path}: row {r + 1}, column {c!r}: expected a finite number, got {got}"
                + (f" ({int(bad.sum())} such rows; leave them out first)" if bad.sum() > 1 else "")
            )
        cols.append(v)
    for c in [group] + ([units] if units else []):
        gap = frame[c].isna().to_numpy()
        if gap.any():
            raise CliError(f"{path}: row {int(np.flatnonzero(gap)[0]) + 1}, column {c!r}: empty")
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
        if args.device and args.backend != "torch":
            raise CliError("--device needs --backend torch")
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
            progress=None if args.no_progress else _progress_bar(),
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


def _progress_bar() -> Any:
    """A tqdm bar per stage on stderr (silent when stderr is not a terminal)."""
    from tqdm import tqdm

    state: dict[str, Any] = {}

    def update(stage: str, done: int, total: int) -> None:
        bar = state.get(stage)
        if bar is None:
            bar = state[stage] = tqdm(
                total=total, desc=stage, unit="block", disable=None, leave=False
            )
        bar.update(done - bar.n)
        if done >= total:
            bar.close()

    return update


def _resolve_schema(path: Path | None, export: Any) -> Any:
    from recourse_engine import SchemaError, carloan_schema, load_schema

    if path is not None:
        try:
            return load_schema(path)
        except SchemaError as exc:
            raise CliError(str(exc)) from None
    return export.schema if export.schema is not None else carloan_schema()


def run_effects(args: argparse.Namespace) -> int:
    from analysis.export import ExportError, load_export
    from analysis.segregation.effects import (
        EffectsError,
        compute_effects,
        fit_action_gamm,
        gamm_probability,
        groupings_present,
        study_population,
    )
    from analysis.segregation.indices import SegregationInputError
    from analysis.segregation.report import verdict_counts, write_report

    try:
        for name in ("bootstrap", "draws", "clusters"):
            if getattr(args, name) < 1:
                raise CliError(f"--{name} must be >= 1, got {getattr(args, name)}")
        if not 0.0 <= args.eps_quantile <= 1.0:
            raise CliError(f"--eps-quantile must be in [0, 1], got {args.eps_quantile}")
        out_folder(args.out)
        keep = None
        if args.groups:
            keep = [v.strip() for v in args.groups.split(",") if v.strip()]
            if len(keep) != 2:
                raise CliError(f"--groups needs exactly two values, got {args.groups!r}")
        export = load_export(args.export)
        schema = _resolve_schema(args.schema, export)
        unknown = [k for k in export.items if k not in schema.keys]
        if unknown:
            raise CliError(f"export items not in the schema: {', '.join(unknown)}")
        pop = study_population(export.evaluations, export.participants, schema, args.group, keep)
        by = {
            col: study_population(
                export.evaluations, export.participants, schema, args.group, keep, by=col
            )
            for col in groupings_present(export.evaluations)
            if col != "strategy"
        }
        prob, by_prob = None, None
        if args.compliance == "gamm":
            fit = fit_action_gamm(export.evaluations)
            prob = gamm_probability(pop, export.evaluations, fit)
            by_prob = {col: gamm_probability(p, export.evaluations, fit) for col, p in by.items()}
        effects = compute_effects(
            pop,
            by=by,
            by_probability=by_prob,
            minority=args.minority,
            eps_quantile=args.eps_quantile,
            clusters=args.clusters,
            bootstrap=args.bootstrap,
            draws=args.draws,
            probability=prob,
            probability_source=args.compliance,
            seed=args.seed,
            progress=None if args.no_progress else _progress_bar(),
        )
    except (CliError, ExportError, EffectsError, SegregationInputError) as exc:
        return fail(str(exc))
    except ImportError as exc:
        return fail(f"--compliance gamm needs analysis.gamm ({exc})")
    except ValueError as exc:  # the GAMM's own input checks
        return fail(f"GAMM: {str(exc).splitlines()[0]}")
    write_report(effects, pop, args.out)
    (args.out / EFFECTS_JSON).write_text(json.dumps(effects, indent=2) + "\n", encoding="utf-8")
    effects.to_frame().to_csv(args.out / EFFECTS_CSV, index=False)
    print(
        f"wrote {args.out / EFFECTS_JSON}, {args.out / EFFECTS_CSV} and "
        f"{args.out / 'report.html'}; "
        "verdicts of the 3 indices (worse/better only where the 95% interval excludes 0):"
    )
    arms = [("strategy", effects["strategies"])]
    arms += [(col, table) for col, table in sorted(effects.get("by", {}).items())]
    for col, table in arms:
        for name, arm in table.items():
            c = verdict_counts(arm)
            print(
                f"  {col} {name}: {c['worse']} worse, {c['better']} better, "
                f"{c['no clear change']} no clear change"
            )
    return 0
