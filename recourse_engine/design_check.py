"""The design check: what a study's participants would see, predicted before launch.

A researcher who writes `proximate:1,wachter:1,ebr_generated:1` means three plans, one from
each; whether Wachter's own plan is shown depends on the pool, the decision model, the
constraints and the fit, and a method that silently falls back for a third of the
participants measures something else than the design says. So, before launch, a sample of
profiles (the study's pool, or the answers a pool-collection study gathered) goes through
exactly what a participant's profile goes through: the decision model judges it as the
participant's own profile (`rejects_factual`), and each rejected one is given to
`PoolIndex.select` with the study's fitted methods and fallback, once per condition, with
the same seed for every condition (the conditions are compared on the same people).

Counted per condition and design part: how often each method shows its own plan and why it
did not (the selection's fallback reasons), the sparsity and proximity of what is shown, the
share of participants with a full set of plans and the plans per participant; and over the
sample, the approval rate. `design_warnings` names each figure past the study's thresholds.
Pure: no database; the study app feeds it the worker's own index and generators.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .decision import rejects_factual
from .design import Design, parse_design
from .generated import Generator
from .selection import PoolIndex, Selection

#: threshold defaults: warn when more sampled profiles than this are approved (they would
#: not be rejected, so the study's manipulation does not reach them) ...
APPROVAL_RATE_ABOVE = 0.10
#: ... and when a method shows its own plan to fewer rejected profiles than this
OWN_PLAN_RATE_BELOW = 0.80


@dataclass(frozen=True)
class Thresholds:
    """Where a design check's figure becomes a warning (shares in [0, 1])."""

    approval_rate_above: float = APPROVAL_RATE_ABOVE
    own_plan_rate_below: float = OWN_PLAN_RATE_BELOW


def sample_rows(n_rows: int, n: int, seed: int) -> np.ndarray:
    """`n` distinct row numbers of `n_rows` (all of them when there are fewer), seeded, in
    ascending order so that a larger sample with the same seed is not reshuffled."""
    if n < 1:
        raise ValueError(f"sample size must be at least 1, got {n}")
    rng = np.random.default_rng([int(seed), 0xDC])
    return np.sort(rng.choice(n_rows, size=min(n, n_rows), replace=False))


def _stats(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"mean": None, "median": None}
    arr = np.asarray(values, dtype=float)
    return {"mean": round(float(arr.mean()), 4), "median": round(float(np.median(arr)), 4)}


def _rate(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def _reason(text: str) -> str:
    """A fallback's reason without what was shown instead (so that equal reasons count
    together): the part before the first "; "."""
    return text.split("; ", 1)[0].strip() or "unknown"


class _PartTally:
    def __init__(self, index: int, label: str, strategy: str, method: str, k: int) -> None:
        self.index, self.label, self.strategy, self.method, self.k = (
            index, label, strategy, method, k,
        )  # fmt: skip
        self.shown = 0
        self.own = 0
        self.reasons: Counter[str] = Counter()
        self.sparsity: list[float] = []
        self.proximity: list[float] = []

    def add(self, picks: list[Any], fallback: str) -> None:
        self.shown += len(picks)
        for pick in picks:
            self.sparsity.append(float(pick.sparsity))
            self.proximity.append(float(pick.proximity))
            if pick.origin == "generated":
                self.own += 1
        if self.method and fallback:
            self.reasons[_reason(fallback)] += 1

    def result(self, profiles: int) -> dict[str, Any]:
        out: dict[str, Any] = {
            "index": self.index,
            "label": self.label,
            "strategy": self.strategy,
            "method": self.method,
            "k": self.k,
            "shown": self.shown,
            "shown_rate": _rate(self.shown, self.k * profiles),
            "sparsity": _stats(self.sparsity),
            "proximity": _stats(self.proximity),
        }
        if self.method:
            out["own_plan"] = self.own
            out["own_plan_rate"] = _rate(self.own, profiles)
            out["fallback"] = profiles - self.own
            out["fallback_rate"] = _rate(profiles - self.own, profiles)
            out["fallback_reasons"] = [
                {"reason": reason, "n": n} for reason, n in self.reasons.most_common()
            ]
        return out


def _part_picks(selection: Selection, design: Design) -> list[list[Any]]:
    """The selection's picks per design part. The picks keep design order, each part's in a
    row and at most k of them, each labelled with its part (`selection._apply_design`); so
    a walk over the parts takes each one's picks from the front. (Two neighbouring parts of
    one label, `random:1,random:2`, cannot be told apart when one of them fell short: the
    first is then counted full.)"""
    out: list[list[Any]] = []
    at = 0
    picks = selection.picks
    for part in design.parts:
        mine = []
        while at < len(picks) and len(mine) < part.k and picks[at].strategy == part.label:
            mine.append(picks[at])
            at += 1
        out.append(mine)
    return out


def check_design(
    index: PoolIndex,
    codes: np.ndarray,
    income: np.ndarray | None,
    designs: Mapping[str, Design | str],
    generators: Mapping[str, Mapping[str, Generator]],
    *,
    fallback: str = "nearest_pool",
    seed: int = 0,
    source: str = "pool",
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """The design check's figures (JSON-ready) for the sample `codes` (one profile a row,
    with `income` when the model needs it), per condition of `designs` (name -> design; ""
    for a study without conditions), each with its methods in `generators[name]`.

    Profile i of the sample is selected with the seed sequence (seed, i) in every
    condition. `progress(done, total)` is called after each profile."""
    parsed = {name: parse_design(d) for name, d in designs.items()}
    n = int(codes.shape[0])
    tallies = {
        name: [
            _PartTally(i, p.label, p.strategy, p.method or "", p.k)
            for i, p in enumerate(design.parts)
        ]
        for name, design in parsed.items()
    }
    plans: dict[str, list[int]] = {name: [] for name in parsed}
    approved = 0
    for i in range(n):
        inc = None if income is None else float(income[i])
        if not rejects_factual(index.model, codes[i], inc):
            approved += 1
        else:
            for name, design in parsed.items():
                selection = index.select(
                    codes[i],
                    inc,
                    design,
                    seed=[int(seed), i],
                    generators=generators.get(name, {}),
                    fallback=fallback,
                )
                plans[name].append(len(selection.picks))
                for tally, picks in zip(tallies[name], _part_picks(selection, design), strict=True):
                    tally.add(picks, selection.fallbacks.get(tally.label, ""))
        if progress is not None:
            progress(i + 1, n)
    rejected = n - approved
    conditions = []
    for name, design in parsed.items():
        shown = plans[name]
        conditions.append(
            {
                "condition": name,
                "design": str(design),
                "requested": design.total,
                "profiles": rejected,
                "full_set_rate": _rate(sum(k == design.total for k in shown), rejected),
                "no_plan_rate": _rate(sum(k == 0 for k in shown), rejected),
                "plans_per_participant": round(float(np.mean(shown)), 4) if shown else None,
                "parts": [t.result(rejected) for t in tallies[name]],
            }
        )
    return {
        "sample": {
            "source": source,
            "drawn": n,
            "approved": approved,
            "rejected": rejected,
            "seed": int(seed),
        },
        "approval_rate": _rate(approved, n),
        "conditions": conditions,
    }


def warning_key(condition: str, part_index: int, label: str) -> str:
    """A stable name of one method part's own-plan warning (what an acknowledgement names)."""
    return f"own_plan_rate:{condition or '-'}:{part_index}:{label}"


def design_warnings(result: Mapping[str, Any], thresholds: Thresholds) -> list[dict[str, Any]]:
    """Each figure of a check past the thresholds, as {key, text, value, threshold}."""
    out = []
    approval = result.get("approval_rate")
    if approval is not None and approval > thresholds.approval_rate_above:
        out.append(
            {
                "key": "approval_rate",
                "value": approval,
                "threshold": thresholds.approval_rate_above,
                "text": (
                    f"the decision model approves {approval:.0%} of the sampled profiles "
                    f"(threshold {thresholds.approval_rate_above:.0%}): those participants are "
                    "not rejected, so the study's rejection and plans do not apply to them"
                ),
            }
        )
    for cond in result.get("conditions", []):
        where = f"condition {cond['condition']}" if cond["condition"] else "the study's design"
        for part in cond["parts"]:
            rate = part.get("own_plan_rate")
            if not part.get("method") or rate is None or rate >= thresholds.own_plan_rate_below:
                continue
            reasons = "; ".join(f"{r['reason']} ({r['n']})" for r in part["fallback_reasons"][:3])
            out.append(
                {
                    "key": warning_key(cond["condition"], part["index"], part["label"]),
                    "value": rate,
                    "threshold": thresholds.own_plan_rate_below,
                    "text": (
                        f"{where}: {part['label']} shows its own plan to {rate:.0%} of rejected "
                        f"participants (threshold {thresholds.own_plan_rate_below:.0%})"
                        + (f"; otherwise: {reasons}" if reasons else "")
                    ),
                }
            )
    return out


def binomial_interval(n: int, p: float, level: float = 0.99) -> tuple[int, int]:
    """The central `level` interval of a Binomial(n, p) count: where an observed count of
    own plans among n participants lies when the prediction p is right."""
    from scipy.stats import binom

    if n <= 0:
        return 0, 0
    tail = (1.0 - level) / 2.0
    return int(binom.ppf(tail, n, p)), int(binom.ppf(1.0 - tail, n, p))
