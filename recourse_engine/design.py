"""Study designs: which strategies choose a participant's recourses, and how many each.

Grammar: comma-separated parts `strategy[@distance[weights]]:k`, e.g.
`sparsest:1,proximate:1,random:3`, `lowest_cost@l2:2`, `diverse@proximity:3`,
`lowest_cost@weighted[1,0.5,0,0]:1`, `proximate:1,wachter:1,ebr_generated:1,gs:1,random:1`.
Parts are applied in order; each part's picks are distinct from all earlier picks. Which
names a part may use, which of them take a distance and which generate a counterfactual with
a recourse method is read from the one strategy table (`recourse_engine.strategies`), so a
design is checked against exactly what the selection can run. A method gives one
counterfactual per profile, so a generating part asks for exactly one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .distances import Distance, get_distance
from .strategies import STRATEGIES, design_strategies, get_strategy

MAX_PER_PART = 50
MAX_TOTAL = 100

_PART = re.compile(
    r"^(?P<name>[a-z][a-z0-9_]*)"
    r"(?:@(?P<dist>[a-z][a-z0-9_]*)(?:\[(?P<params>[^\]]*)\])?)?"
    r":(?P<k>[^:]+)$"
)


class DesignError(ValueError):
    """A design string that cannot be used; the message names the part and the problem.

    `index` is the 0-based position of the offending part (None when the design as a whole
    is wrong), so a caller can point at it, e.g. `design[2]`.
    """

    def __init__(self, message: str, index: int | None = None) -> None:
        super().__init__(message)
        self.index = index


@dataclass(frozen=True)
class DesignPart:
    strategy: str
    k: int
    distance: Distance | None = None

    @property
    def label(self) -> str:
        """The strategy as recorded on each recourse (e.g. `sparsest`, `lowest_cost@l2`)."""
        if get_strategy(self.strategy).ranked and self.distance is not None:
            return f"{self.strategy}@{self.distance.label}"
        return self.strategy

    @property
    def method(self) -> str | None:
        """The recourse method that generates this part's counterfactual (None: a pool part)."""
        return get_strategy(self.strategy).generates

    def __str__(self) -> str:
        return f"{self.label}:{self.k}"


@dataclass(frozen=True)
class Design:
    parts: tuple[DesignPart, ...]

    @property
    def total(self) -> int:
        return sum(p.k for p in self.parts)

    @property
    def methods(self) -> list[str]:
        """The recourse methods the design's generating parts use, in design order."""
        return list(dict.fromkeys(p.method for p in self.parts if p.method is not None))

    def __str__(self) -> str:
        return ",".join(str(p) for p in self.parts)


def _split_top_level(text: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def _parse_part(raw: str) -> DesignPart:
    text = raw.strip()
    if not text:
        raise DesignError("empty part (two commas in a row, or a trailing comma?)")
    m = _PART.match(text)
    if not m:
        raise DesignError(f"part {text!r}: expected strategy:k, e.g. sparsest:1 or random:3")
    name, dist, params, k_text = m["name"], m["dist"], m["params"], m["k"]
    strategy = STRATEGIES.get(name)
    if strategy is None:
        raise DesignError(
            f"part {text!r}: unknown strategy {name!r}; known: {', '.join(design_strategies())}"
        )
    if not strategy.in_design:
        raise DesignError(
            f"part {text!r}: {name!r} cannot be named in a study design; "
            f"design strategies: {', '.join(design_strategies())}"
        )
    if not k_text.isdigit() or int(k_text) < 1:
        raise DesignError(f"part {text!r}: k must be a positive integer, got {k_text!r}")
    k = int(k_text)
    if strategy.generates is not None and k != 1:
        raise DesignError(
            f"part {text!r}: the method {strategy.generates!r} generates one counterfactual "
            f"per profile; use {name}:1"
        )
    if k > MAX_PER_PART:
        raise DesignError(f"part {text!r}: k = {k} is more than {MAX_PER_PART}")
    distance: Distance | None = None
    if dist is not None:
        if not strategy.ranked:
            ranked = sorted(s.name for s in STRATEGIES.values() if s.ranked)
            raise DesignError(
                f"part {text!r}: {name!r} takes no @distance (only {', '.join(ranked)} do)"
            )
        try:
            values = tuple(float(v) for v in params.split(",")) if params else ()
        except ValueError:
            raise DesignError(f"part {text!r}: weights must be numbers, got [{params}]") from None
        try:
            distance = get_distance(dist, values)
        except ValueError as exc:
            raise DesignError(f"part {text!r}: {exc}") from None
    elif strategy.distance is not None:
        distance = get_distance(strategy.distance)
    return DesignPart(strategy=name, k=k, distance=distance)


def parse_design(text: str | Design) -> Design:
    """Parse a design string; raises DesignError naming the offending part."""
    if isinstance(text, Design):
        return text
    if not isinstance(text, str) or not text.strip():
        raise DesignError("design is empty; e.g. sparsest:1,proximate:1,random:3")
    parsed = []
    for i, raw in enumerate(_split_top_level(text)):
        try:
            parsed.append(_parse_part(raw))
        except DesignError as exc:
            raise DesignError(str(exc), index=i) from None
    design = Design(tuple(parsed))
    if design.total > MAX_TOTAL:
        raise DesignError(f"design asks for {design.total} recourses; at most {MAX_TOTAL}")
    return design
