"""`recourse-analysis coding`: the qualitative analysis of the "why" answers of an export.

    coding agreement --codings CODES.csv [--codebook CODEBOOK.csv] --out DIR
    coding quotes --export DIR|ZIP [--codings FINAL.csv --code NAME ...] [--ratings 1-3]
                  [--field acceptance_why|action_why] --out DIR
    coding suggest --export DIR|ZIP --field acceptance_why [--k 8] --out DIR

A codings table has one row per answer (`unit`: `<recourse id>:<field>`) and coder, with the
codes given (`codes`, ';'-joined); a final-codes table has `unit` and `code`. Every input is
checked before anything is written; bad input ends with one `error:` line and exit status 2.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

import pandas as pd

from analysis import table_schemas
from analysis.cli.common import CliError, add_command, fail, out_folder, read_csv

#: `--export`'s help: the free-text answers are only in an export written with the text
EXPORT_WITH_TEXT = "export folder or ZIP, with text"


def register(subparsers: Any) -> None:
    c = subparsers.add_parser(
        "coding",
        help="qualitative analysis of the free-text answers: coder agreement (kappa, alpha), "
        "exemplar quotes, suggested groups",
        description=__doc__.split("\n\n")[0],
    )
    sub = c.add_subparsers(dest="coding_command", required=True, metavar="STEP")
    a = add_command(
        sub,
        "agreement",
        _agreement,
        help="Cohen's kappa per coder pair, Krippendorff's alpha",
        writes="kappa.csv and alpha.csv",
    )
    a.add_argument("--codings", required=True, type=Path, help="CSV: unit, coder, codes")
    a.add_argument("--codebook", type=Path, help="CSV: code, definition, example")
    q = add_command(
        sub,
        "quotes",
        _quotes,
        help="exemplar quotes with strategy, distances and rating",
        export=EXPORT_WITH_TEXT,
        writes="quotes.csv, quotes.md and quotes.tex",
    )
    q.add_argument("--codings", type=Path, help="CSV of final codes: unit, code")
    q.add_argument("--code", action="append", default=[], help="keep answers with this code")
    q.add_argument("--ratings", help="keep ratings in a band, e.g. 1-3")
    q.add_argument("--field", choices=("acceptance_why", "action_why"))
    s = add_command(
        sub,
        "suggest",
        _suggest,
        help="group similar answers (a suggestion, never a code)",
        export=EXPORT_WITH_TEXT,
        writes="suggestions.csv",
    )
    s.add_argument("--field", required=True, choices=("acceptance_why", "action_why"))
    s.add_argument("--k", type=int, default=8, help="number of groups (default 8)")


def _run(body: Any, args: argparse.Namespace) -> int:
    try:
        return body(args)
    except CliError as exc:
        return fail(str(exc))
    except ValueError as exc:  # CodingError, CodebookError, a bad band or field
        return fail(str(exc))


def _agreement(args: argparse.Namespace) -> int:
    def body(args: argparse.Namespace) -> int:
        from analysis.coding import Codebook, agreement

        out = out_folder(args.out)
        codings = read_csv(args.codings, table_schemas.codings())
        codebook = Codebook.read(args.codebook) if args.codebook else None
        result = agreement(codings, codebook)
        out.mkdir(parents=True, exist_ok=True)
        result.kappa.to_csv(out / "kappa.csv", index=False)
        result.alpha.to_csv(out / "alpha.csv", index=False)
        print(result.alpha.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        print(f"wrote {out / 'kappa.csv'}, {out / 'alpha.csv'}")
        return 0

    return _run(body, args)


def _evaluations(path: Path) -> pd.DataFrame:
    from analysis.export import ExportError, load_export

    try:
        return load_export(path).evaluations
    except ExportError as exc:
        raise CliError(str(exc)) from None


def _band(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    m = re.fullmatch(r"\s*(\d+)\s*-\s*(\d+)\s*", text)
    if not m:
        raise CliError(f"--ratings {text!r}: expected a band such as 1-3")
    return int(m[1]), int(m[2])


def _quotes(args: argparse.Namespace) -> int:
    def body(args: argparse.Namespace) -> int:
        from analysis.coding import quotes_table, write_quotes

        out = out_folder(args.out)
        band = _band(args.ratings)
        codes = read_csv(args.codings, table_schemas.coded_units()) if args.codings else None
        table = quotes_table(_evaluations(args.export), codes, want=args.code, ratings=band,
                             field=args.field)  # fmt: skip
        paths = write_quotes(table, out)
        print(f"{len(table)} quotes; wrote {', '.join(str(p) for p in paths)}")
        return 0

    return _run(body, args)


def _suggest(args: argparse.Namespace) -> int:
    def body(args: argparse.Namespace) -> int:
        from analysis.coding import suggest_groups

        out = out_folder(args.out)
        ev = _evaluations(args.export)
        if args.field not in ev.columns:
            raise CliError(f"the export holds no {args.field!r} column (export it with the text)")
        answers = pd.Series(
            ev[args.field].to_numpy(), index=ev["recourse"].astype(str) + ":" + args.field
        )
        table = suggest_groups(answers, k=args.k)
        out.mkdir(parents=True, exist_ok=True)
        table.to_csv(out / "suggestions.csv", index=False)
        print(f"{len(table)} answers in {table['suggested_group'].nunique()} suggested groups; "
              f"wrote {out / 'suggestions.csv'}")  # fmt: skip
        return 0

    return _run(body, args)
