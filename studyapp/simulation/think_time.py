"""A think time as a load run takes it on its command line; free of Django so a benchmark
can check its arguments before it starts a server."""

from __future__ import annotations


def parse_think(text: str) -> tuple[float, float]:
    """`MIN,MAX` seconds (or one number for both) -> (min, max); ValueError says why not."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) == 1:
        parts = parts * 2
    if len(parts) != 2:
        raise ValueError(f"think time must be MIN,MAX seconds, got {text!r}")
    try:
        lo, hi = float(parts[0]), float(parts[1])
    except ValueError:
        raise ValueError(f"think time must be numbers of seconds, got {text!r}") from None
    if not (0 <= lo <= hi <= 600):
        raise ValueError(f"think time needs 0 <= MIN <= MAX <= 600 seconds, got {text!r}")
    return lo, hi
