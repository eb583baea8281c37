"""A stand-in for a long method fit, imported by the test's workers (``--include``): it
holds a worker slot for a given time and writes when it started and ended."""

from __future__ import annotations

import time
from pathlib import Path

from celery import shared_task


@shared_task(name="tests.integration.slow_fit", acks_late=True)
def slow_fit(marks: str, seconds: float) -> None:
    path = Path(marks)
    path.write_text(f"start {time.time()}\n")
    time.sleep(seconds)
    with path.open("a") as f:
        f.write(f"end {time.time()}\n")
