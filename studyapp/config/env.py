"""Whole numbers the deployment sets in the environment (process and thread counts), read
before Django's settings: a bad value stops the process with one line naming it."""

from __future__ import annotations

import os


def int_env(name: str, default: int, low: int, high: int) -> int:
    """`name` from the environment (unset or empty: `default`), a whole number low..high."""
    raw = os.environ.get(name, "")
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SystemExit(f"{name} must be a whole number, got {raw!r}") from None
    if not low <= value <= high:
        raise SystemExit(f"{name} must be {low}..{high}, got {value}")
    return value
