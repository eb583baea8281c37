"""Running `python -m analysis` as a user would (a child interpreter in the repository root),
shared by the tests that check exit statuses and what a command prints."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_analysis(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "analysis", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
