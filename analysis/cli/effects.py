"""`recourse-analysis effects`: the segregation effects of the recourses shown in a study
export, for every index of `analysis.segregation.catalogue` (`analysis.segregation.effects`).

Every argument and file is checked before anything is computed or written; a bad
one ends the command with exit status 2 and a one-line `error:` message.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from analysis.cli.common import EXPORT_HELP, CliError, add_command, fail, out_folder, progress_bar
from analysis.segregation.catalogue import CATALOGUE
from analysis.significance import BOOTSTRAP

#: the files `effects --out DIR` writes besides the report
EFFECTS_JSON, EFFECTS_CSV = "effects.json", "effects.csv"


def register(subparsers: Any) -> None:
    e = add_command(
        subparsers,
        "effects",
        run_effects,
        help="segregation effects of the recourses shown in a study export",
        description="Indices of the participants' profiles before and after implementing the "
        "recourse of each strategy, with bootstrap intervals, partial compliance, and a report.",
        export=EXPORT_HELP,
        writes=f"report.html, its figures, {EFFECTS_JSON} and {EFFECTS_CSV}",
        progress=True,
    )
    e.add_argument("--group", required=True, help="participants.csv column with the group")
    e.add_argument("--groups", help="two values of --group to keep, comma-separated")
    e.add_argument("--minority", help="value of --group that is the minority (default: smaller)")
    e.add_argument(
        "--schema",
        type=Path,
        help="schema JSON (default: the export's schema.json, else the built-in car-loan schema)",
    )
    e.add_argument("--eps-quantile", type=float, default=0.2)
    e.add_argument("--clusters", type=int, default=30)
    e.add_argument(
        "--bootstrap",
        type=int,
        default=BOOTSTRAP,
        help=f"participant bootstrap resamples (default {BOOTSTRAP}: enough for a Holm verdict "
        "in a table of up to 50 intervals)",
    )
    e.add_argument("--draws", type=int, default=200, help="partial-compliance Monte-Carlo draws")
    e.add_argument(
        "--compliance",
        choices=("rating", "gamm"),
        default="rating",
        help="probability of implementing: (action-1)/6 of the participant's own rating, or "
        "the fitted GAMM's predicted action rating mapped the same way",
    )
    e.add_argument("--seed", type=int, default=0)


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
            progress=None if args.no_progress else progress_bar(),
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
        f"verdicts of the {len(CATALOGUE)} indices (worse/better only where the 95% interval "
        "excludes 0 and the Holm-adjusted p across the table is below 0.05):"
    )
    mult = effects["multiplicity"]
    for col in mult["too_few_resamples"]:
        print(
            f"  note: {effects['bootstrap_usable']} usable resamples are too few for any "
            f"{col} verdict to pass Holm across {mult['families'][col]} intervals; rerun "
            f"with --bootstrap {mult['needed'][col]} or more"
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
