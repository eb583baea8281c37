"""`python -m analysis <command>`: each command module adds its sub-commands via `register`."""

from __future__ import annotations

import argparse
import importlib
import sys

COMMAND_MODULES = (
    "analysis.cli_gamm",
    "analysis.cli_segregation",
    "analysis.cli_experiment",
    "analysis.cli_study",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m analysis", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
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
