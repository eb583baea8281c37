"""What every `recourse-analysis` (`python -m analysis`) command shares, so that errors and
outputs read the same in each: one `error:` line on stderr and exit status 2, the same words
for a CSV that cannot be read, and the convention of `recourse_engine.cli_convention`
(`--out DIR` is a folder the command writes named files into; `--no-progress`).

Each command module of `analysis.cli` is named for its command and declares its command
through `add_command`, which adds the arguments commands share (`--export`, `--out`,
`--no-progress`, the hidden old `--json`) in one way."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.table_schemas import check_table
from recourse_engine.cli_convention import OutFolderError, check_out_folder
from recourse_engine.cli_convention import add_command as convention_command
from recourse_engine.csv_table import RaggedCsvError, read_csv_table

__all__ = [
    "CliError",
    "EXPORT_HELP",
    "add_command",
    "fail",
    "out_folder",
    "progress_bar",
    "read_csv",
    "add_json_flag_note",
    "refuse_json_flag",
]

#: `--export`'s help where a command reads the study export as it comes
EXPORT_HELP = "study export: a folder or the console's ZIP"


class CliError(Exception):
    """Bad input: the message is printed as one line and the command exits with 2."""


def add_command(
    subparsers: Any,
    name: str,
    func: Callable[[argparse.Namespace], int],
    *,
    export: str | None = None,
    json_note: bool = False,
    **declared: Any,
) -> argparse.ArgumentParser:
    """The sub-command `name` running `func` with the shared arguments it has: the
    convention's (`help`, `description`, `--out DIR` when it `writes`, `--no-progress` when
    it draws `progress`: `recourse_engine.cli_convention.add_command`), `--export` (required;
    `export` is its help) and the old `--json FILE`, hidden and refused (`json_note`)."""
    parser = convention_command(subparsers, name, func, **declared)
    if export is not None:
        parser.add_argument("--export", required=True, type=Path, help=export)
    if json_note:
        add_json_flag_note(parser)
    return parser


def fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def out_folder(path: Path | str) -> Path:
    """`--out DIR` checked (not created): a CliError when it cannot be the output folder."""
    try:
        return check_out_folder(path)
    except OutFolderError as exc:
        raise CliError(str(exc)) from None


def add_json_flag_note(parser: argparse.ArgumentParser) -> None:
    """The old `--json FILE`, hidden: refused with a message pointing to `--out DIR`."""
    parser.add_argument("--json", help=argparse.SUPPRESS)


def refuse_json_flag(args: argparse.Namespace, writes: str) -> None:
    if getattr(args, "json", None) is not None:
        raise CliError(f"--json FILE was replaced by --out DIR (the command writes {writes} there)")


def read_csv(path: Path, schema: Any = None) -> pd.DataFrame:
    """The CSV at `path`, checked against its declared pandera `schema`
    (`analysis.table_schemas`) when given; a missing, empty, unparsable or ill-formed file
    is a CliError naming it (and the row and column of the first problem)."""
    if not path.is_file():
        raise CliError(f"{path}: no such file")
    try:
        frame = read_csv_table(path)
    except RaggedCsvError as exc:
        raise CliError(str(exc)) from None
    except pd.errors.EmptyDataError:
        raise CliError(f"{path}: file is empty") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise CliError(f"{path}: cannot parse CSV ({str(exc).splitlines()[0]})") from None
    problem = None if schema is None else check_table(frame, schema, str(path))
    if problem is not None:
        raise CliError(problem)
    return frame


def progress_bar() -> Callable[[str, int, int], None]:
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
