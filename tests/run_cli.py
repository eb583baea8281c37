"""Running `python -m <package>` as a user would (a child interpreter in the repository root),
shared by the tests that check exit statuses and what a command prints."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_module(module: str, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_analysis(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return run_module("analysis", *args, timeout=timeout)
