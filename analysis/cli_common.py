"""What every `python -m analysis` command shares, so that errors read the same in each:
one `error:` line on stderr and exit status 2, and the same words for a CSV that cannot be
read or a number argparse refuses."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd


class CliError(Exception):
    """Bad input: the message is printed as one line and the command exits with 2."""


def fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


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
