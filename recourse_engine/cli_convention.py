"""The one command-line convention of `recourse-engine`, `recourse-analysis` (and `python -m
recourse_engine` / `python -m analysis`):

* `--out DIR` is always a folder: created when missing (its parent must exist), the command
  writes its files under fixed names inside it and prints what it wrote;
* `--no-progress` is accepted by every command and turns its progress bars off; without it
  bars are drawn only on a terminal (tqdm's own `disable=None`), so a log gets no bar lines;
* bad input ends the command with one `error:` line on stderr, exit status 2, and nothing
  written: argparse's own errors too (`ArgumentParser` replaces its usage block by one line
  naming the problem and pointing at `--help`).

Shared here so that the engine's command line and the analysis's cannot drift apart (the
analysis may import the engine, never the other way round).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

#: suffixes that show an `--out` value was meant as a file name (the old convention)
FILE_SUFFIXES = (".csv", ".json", ".joblib", ".pt", ".md", ".html", ".png", ".txt")


def usage_error(prog: str, message: str) -> str:
    """The one line that ends a command given bad arguments (its usage stays in `--help`)."""
    return f"error: {message} (see {prog} --help)"


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser whose errors are one `error:` line and exit status 2, like every
    other bad input; its sub-command parsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(usage_error(self.prog, message) + "\n")
        sys.exit(2)


def bar_switch(no_progress: bool) -> bool | None:
    """tqdm's `disable` for a command's bars: off with `--no-progress`, else None (drawn only
    on a terminal, so a log gets no bar lines)."""
    return True if no_progress else None


class OutFolderError(ValueError):
    """An `--out` value that cannot be the output folder; the message says why."""


def prog(module: str) -> str:
    """The program name for help and usage: the console script's own name when run as one
    (`recourse-analysis`), else `python -m MODULE`."""
    name = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    if not name or name in ("__main__.py", "-c", "-m") or name.endswith(".py"):
        return f"python -m {module}"
    return name


def add_out_folder(parser: argparse.ArgumentParser, writes: str, required: bool = True) -> None:
    """`--out DIR`, saying which files the command writes inside it."""
    parser.add_argument(
        "--out",
        required=required,
        type=Path,
        metavar="DIR",
        help=f"output folder, created if missing; the command writes {writes} inside it",
    )


def add_progress_flag(
    parser: argparse.ArgumentParser, legacy_quiet: bool = False, draws: bool = True
) -> None:
    """`--no-progress` (and, where a command had it, `--quiet` as a hidden alias); a command
    that `draws` no bars accepts it all the same, so that scripts can pass it to any."""
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bars (drawn only on a terminal)"
        if draws
        else "accepted by every command; this one draws no progress bars",
    )
    if legacy_quiet:
        parser.add_argument(
            "--quiet", dest="no_progress", action="store_true", help=argparse.SUPPRESS
        )


def add_shared_arguments(
    parser: argparse.ArgumentParser,
    *,
    writes: str | None = None,
    out_required: bool = True,
    progress: bool = False,
    legacy_quiet: bool = False,
) -> None:
    """The convention's arguments a command has: `--out DIR` when it `writes` files (named in
    its help) and `--no-progress` (every command; its help says whether it draws
    `progress` bars)."""
    if writes is not None:
        add_out_folder(parser, writes, required=out_required)
    add_progress_flag(parser, legacy_quiet=legacy_quiet, draws=progress)


def add_command(
    subparsers: Any,
    name: str,
    func: Callable[[argparse.Namespace], int],
    *,
    help: str,
    description: str | None = None,
    **shared: Any,
) -> argparse.ArgumentParser:
    """A sub-command running `func`, with its shared arguments (`add_shared_arguments`'s
    keywords) declared here, so that every command spells them alike."""
    parser = subparsers.add_parser(name, help=help, description=description)
    add_shared_arguments(parser, **shared)
    parser.set_defaults(func=func)
    return parser


def check_out_folder(path: Path | str) -> Path:
    """The output folder `path`, checked but not created: not an existing file, not a file
    name, and inside an existing folder. Raises OutFolderError."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise OutFolderError(f"--out {out}: exists and is not a folder (--out takes a folder)")
    if not out.exists() and out.suffix.lower() in FILE_SUFFIXES:
        raise OutFolderError(
            f"--out {out}: looks like a file name; --out takes a folder and the command "
            "names the files inside it"
        )
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise OutFolderError(f"--out {out}: folder {parent} does not exist")
    return out


def write_atomic(out: Path, write: Callable[[Path], None]) -> None:
    """Write through a temporary file beside `out`, renamed into place when complete."""
    out.parent.mkdir(exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    os.close(fd)
    try:
        write(Path(tmp))
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
