"""What every `recourse-analysis` (`python -m analysis`) command shares, so that errors and
outputs read the same in each: one `error:` line on stderr and exit status 2, the same words
for a CSV that cannot be read, and the convention of `recourse_engine.cli_convention`
(`--out DIR` is a folder the command writes named files into; `--no-progress`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from recourse_engine.cli_convention import (
    OutFolderError,
    add_out_folder,
    add_progress_flag,
    check_out_folder,
)

__all__ = [
    "CliError",
    "add_out_folder",
    "add_progress_flag",
    "fail",
    "out_folder",
    "read_csv",
    "add_json_flag_note",
    "refuse_json_flag",
]


class CliError(Exception):
    """Bad input: the message is printed as one line and the command exits with 2."""


def fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def out_folder(path: Path | str) -> Path:
    """`--out DIR` checked (not created): a CliError when it cannot be the output folder."""
    try:
        return check_out_folder(path)
    except OutFolderError as exc:
        raise CliError(str(exc)) from None


def add_json_flag_note(parser) -> None:
    """The old `--json FILE`, hidden: refused with a message pointing to `--out DIR`."""
    import argparse

    parser.add_argument("--json", help=argparse.SUPPRESS)


def refuse_json_flag(args, writes: str) -> None:
    if getattr(args, "json", None) is not None:
        raise CliError(f"--json FILE was replaced by --out DIR (the command writes {writes} there)")


def read_csv(path: Path) -> pd.DataFrame:
    """The CSV at `path`; a missing, empty or unparsable file is a CliError naming it."""
    if not path.is_file():
        raise CliError(f"{path}: no such file")
    try:
        return pd.read_csv(path)
    except pd.errors.EmptyDataError:
        raise CliError(f"{path}: file is empty") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise CliError(f"{path}: cannot parse CSV ({str(exc).splitlines()[0]})") from None
