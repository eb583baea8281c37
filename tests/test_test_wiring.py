"""The suite's scheduling hints (tests/conftest.py) name files that exist: a renamed file
would silently lose its place at the head of the queue."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import LONG_UNITS, STACK_DIRS

ROOT = Path(__file__).resolve().parents[1]


def test_long_units_and_stack_folders_exist() -> None:
    missing = [p for p in (*LONG_UNITS, *STACK_DIRS) if not (ROOT / p).exists()]
    assert not missing, missing
    assert not any(p.startswith(STACK_DIRS) for p in LONG_UNITS)
