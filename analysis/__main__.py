"""`recourse-analysis` (or `python -m analysis`): the statistics of a study export and of
recourse methods — the study's GAMMs (Table S2, Figure 3), a comparison of strategies or
methods, the segregation effects of the recourses shown, any GAMM in mgcv's formula syntax,
segregation indices of a population, the methods x datasets experiment, and the export
as labelled R / SPSS data with an R script that refits the models in mgcv.

Each command is a module of `analysis.cli` named for it (`analysis.cli.COMMANDS`), which
adds its sub-command via `register`."""

from __future__ import annotations

import argparse
import importlib
import sys

from analysis.cli import COMMANDS, module_of
from recourse_engine.cli_convention import ArgumentParser, prog

DESCRIPTION = """Statistics of a study export and of recourse methods.

An export is the folder `export_study --out DIR` writes or the ZIP the console downloads;
its participant column is `participant`. --out is always a folder (created if missing) in
which the command writes named files; --no-progress turns progress bars off. Bad input
stops a command with one 'error:' line, exit status 2, and nothing written."""

EPILOG = """examples:
  %(prog)s study --export export.zip --out report
  %(prog)s methods --export export.zip --out comparison
  %(prog)s effects --export export.zip --group gender --out effects
  %(prog)s to-r --export export.zip --out r-data
  %(prog)s gamm --input evaluations.csv --outcome action --distance sparsity
  %(prog)s COMMAND --help      options of one command"""


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog=prog("analysis"),
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        name = module_of(command)
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
