"""Running `python -m <package>` as a user would (a child interpreter in the repository root),
and the installed `recourse-study` command in a folder of the test's, shared by the tests that
check exit statuses and what a command prints."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests import warm_python

ROOT = Path(__file__).resolve().parents[1]
STUDY = Path(sys.executable).parent / "recourse-study"
#: the settings a user's shell would not have: the test's own `env` alone decides them
STUDY_ENV_DROPPED = ("STUDYAPP_VAR_DIR", "DATABASE_URL", "PYTHONPATH", "PORT")


def run_module(module: str, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return warm_python.python(["-m", module, *args], ROOT, dict(os.environ), timeout)


def run_analysis(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return run_module("analysis", *args, timeout=timeout)


def run_study(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    """`recourse-study ARGS` in `cwd`, with this environment less `STUDY_ENV_DROPPED`, plus `env`."""
    base = {k: v for k, v in os.environ.items() if k not in STUDY_ENV_DROPPED}
    if warm_python.enabled():
        return warm_python.run([str(STUDY), *args], cwd, {**base, **env}, 300,
                               entry="recourse_study:main")  # fmt: skip
    return subprocess.run(
        [str(STUDY), *args],
        cwd=cwd,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
