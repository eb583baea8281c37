"""What the capacity benchmark assumes about people, and how it reads its runs; free of
Django so that it can be printed, checked and tested without a server.

Dwell time: the seconds a participant stays on a page before submitting it, drawn per page
from a lognormal distribution whose median is the page kind's (`MEDIAN_S`) and whose
spread is `SIGMA` (log scale: the 95th percentile is 2.3 times the median), cut at `CAP`
times the median so that a run's length is bounded. The medians are stated here, not
measured: the demo study's participants are bots, so it has no page-visit medians of
people. They are of the order that published online studies report for a consent text,
a form of ten items, a decision and a plan to rate (tens of seconds each); change them here
and the printed assumptions change with them. A time scale below 1 shortens every dwell:
the load per participant then rises by its inverse, so figures from such a run are not the
realistic capacity and the report says so.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: median seconds on a page before its submit, by page type (`simulation.load.page_type`);
#: "start" is the welcome page (read, then its start button)
MEDIAN_S: Mapping[str, float] = {
    "start": 15.0,
    "consent": 30.0,
    "screening": 20.0,
    "scenario": 30.0,
    "profile": 45.0,
    "pre": 30.0,
    "decision": 20.0,
    "evaluation": 40.0,
    "post": 40.0,
}
#: a page type not named above
DEFAULT_MEDIAN_S = 25.0
#: spread of log(dwell)
SIGMA = 0.5
#: no dwell is longer than this many times its page's median
CAP = 3.0
#: the latency target: p95 over all requests of a run, in milliseconds
TARGET_P95_MS = 200.0
#: participants at once, tried in this order (the search stops at the first that fails)
DEFAULT_STEPS = (250, 500, 1000, 1500, 2000, 3000)


def median_s(page: str) -> float:
    return MEDIAN_S.get(page, DEFAULT_MEDIAN_S)


@dataclass(frozen=True)
class DwellTimes:
    """The dwell distribution, shortened by `scale` (1: as stated)."""

    scale: float = 1.0

    def __post_init__(self) -> None:
        if not 0 < self.scale <= 1:
            raise ValueError(f"time scale must be in (0, 1], got {self.scale}")

    def __call__(self, page: str, rng: random.Random) -> float:
        """Seconds on a page of type `page` (the `dwell` of `simulation.load.run_load`)."""
        median = median_s(page)
        drawn = min(rng.lognormvariate(math.log(median), SIGMA), CAP * median)
        return drawn * self.scale

    def walk_s(self, pages: Iterable[str], rng: random.Random) -> float:
        """One participant's seconds on the given pages, drawn."""
        return sum(self(p, rng) for p in pages)

    def walk_bound_s(self, pages: Iterable[str]) -> float:
        """The longest a participant can dwell on the given pages (every draw at its cap)."""
        return sum(CAP * median_s(p) for p in pages) * self.scale

    def walk_quantile_s(
        self, pages: Sequence[str], q: float, draws: int = 4000, seed: int = 0
    ) -> float:
        """The `q` quantile of a participant's summed dwell over `pages`, by simulation."""
        rng = random.Random(seed)
        walks = sorted(self.walk_s(pages, rng) for _ in range(draws))
        return walks[min(len(walks) - 1, int(q * len(walks)))]

    def describe(self) -> str:
        kinds = ", ".join(f"{k} {v:g}" for k, v in MEDIAN_S.items())
        scaled = (
            ""
            if self.scale == 1
            else f"; every dwell x{self.scale:g} (time scale: NOT the realistic load, "
            f"each participant asks {1 / self.scale:g} times as often)"
        )
        return (
            f"dwell per page: lognormal, median s by page: {kinds} (other pages "
            f"{DEFAULT_MEDIAN_S:g}), sigma {SIGMA:g} on the log scale (p95 = "
            f"{math.exp(1.645 * SIGMA):.1f} x median), cut at {CAP:g} x median{scaled}"
        )


#: the pages a demo participant submits (welcome's start, consent, screening, profile, the
#: scenario, the decision and up to five plans); a study's own questionnaires add more
DEMO_PAGES = (
    "start", "consent", "screening", "profile", "scenario", "decision", *["evaluation"] * 5,
)  # fmt: skip


@dataclass(frozen=True)
class RunPlan:
    """How long one realistic run takes: arrivals over `ramp_s`, then the slowest walk."""

    ramp_s: float
    typical_s: float
    bound_s: float


def plan_run(dwell: DwellTimes, ramp_s: float, pages: Sequence[str] = DEMO_PAGES) -> RunPlan:
    """The run's expected length (the last arrival plus the 99th percentile walk, and 20 s
    for the plans and the pages' own answers) and its bound (every dwell at its cap, plus
    a minute)."""
    return RunPlan(
        ramp_s=ramp_s,
        typical_s=ramp_s + dwell.walk_quantile_s(pages, 0.99) + 20.0,
        bound_s=ramp_s + dwell.walk_bound_s(pages) + 60.0,
    )


def passes(run: Mapping[str, Any], target_ms: float = TARGET_P95_MS) -> bool:
    """A run meets the target: p95 over all requests at most `target_ms`, no error, no
    participant stopped, and the database check passed."""
    if "failed" in run:
        return False
    return (
        run["latency_ms"]["all"]["p95"] <= target_ms
        and run["errors"] == 0
        and run["failed_participants"] == 0
        and bool(run.get("verification", {}).get("ok"))
    )


def largest_passing(runs: Iterable[Mapping[str, Any]], target_ms: float = TARGET_P95_MS) -> int:
    """The largest N such that the run at N and every smaller run passed (0 when none did):
    a pass above a failure is not counted, capacity is what holds all the way up."""
    best = 0
    for run in sorted(runs, key=lambda r: r["n"]):
        if not passes(run, target_ms):
            break
        best = run["n"]
    return best


def next_step(
    steps: Sequence[int], done: Sequence[Mapping[str, Any]], target_ms: float = TARGET_P95_MS
) -> int | None:
    """The next N to try: the smallest step not run yet, none after a failure."""
    if any(not passes(r, target_ms) for r in done):
        return None
    tried = {r["n"] for r in done}
    rest = [n for n in sorted(steps) if n not in tried]
    return rest[0] if rest else None
