"""How a pool strategy chooses among one profile's admissible candidates.

These live apart from `selection` (which finds the candidates and applies a design) so that
the strategy registry can name them without importing the search, and so that the balanced
strategies in `methods/` rank with exactly the same tie-breaking as the plain ones: every
ranking strategy goes through `PickRequest.lowest`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .distances import RANK_DECIMALS

if TYPE_CHECKING:
    from .design import DesignPart
    from .selection import Candidates

DIVERSE_SHORTLIST = 20  # low-cost candidates per requested diverse pick


@dataclass
class PickRequest:
    """One design part's turn to pick.

    `available[pos]` is False for candidates equal to an earlier pick; `picked` holds the
    positions picked by earlier parts. A pick function returns up to `part.k` positions
    into the candidate arrays, all available; the caller enforces distinctness.
    """

    cand: Candidates
    part: DesignPart
    rng: np.random.Generator
    available: np.ndarray
    picked: list[int]

    def lowest(self, cost: np.ndarray, among: np.ndarray | None = None) -> list[int]:
        """Up to k distinct profiles of lowest cost among the available candidates (and
        `among`, when given); ties broken uniformly at random. Costs are rounded so that
        equal sums of fractions tie exactly."""
        cost = np.round(cost, RANK_DECIMALS)
        avail = self.available.copy() if among is None else self.available & among
        out: list[int] = []
        while len(out) < self.part.k and avail.any():
            best = cost[avail].min()
            choice = int(self.rng.choice(np.flatnonzero(avail & (cost == best))))
            out.append(choice)
            avail &= ~self.cand.same_profile(choice)
        return out


PickFn = Callable[[PickRequest], list[int]]


def lowest_cost(req: PickRequest) -> list[int]:
    """`sparsest`, `proximate`, `lowest_cost@d`: the k lowest costs under the part's distance."""
    return req.lowest(req.cand.distance(req.part))


def uniform(req: PickRequest) -> list[int]:
    """`random`: equal costs, so every available candidate ties and each pick is uniform."""
    return req.lowest(np.zeros(len(req.cand)))


def diverse(req: PickRequest) -> list[int]:
    """`diverse@d`: greedy max-min under d among the cheapest candidates. The first pick is
    the cheapest; each next one maximises its smallest distance to everything picked so
    far (earlier parts' picks included)."""
    cand, part = req.cand, req.part
    assert part.distance is not None
    cost = np.round(cand.distance(part), RANK_DECIMALS)
    pos = np.flatnonzero(req.available)
    if pos.size == 0:
        return []
    # shortlist the cheapest candidates, ties in random order
    tiebreak = req.rng.random(pos.size)
    order = np.lexsort((tiebreak, cost[pos]))
    short = pos[order[: max(DIVERSE_SHORTLIST * part.k, part.k)]]
    dist = part.distance
    chosen_codes = [cand.codes[p] for p in req.picked]
    out: list[int] = []
    alive = np.ones(short.size, dtype=bool)
    while len(out) < part.k and alive.any():
        if not chosen_codes:
            idx = int(np.flatnonzero(alive)[0])  # the cheapest (shortlist is cost-sorted)
        else:
            mins = np.full(short.size, np.inf)
            for c in chosen_codes:
                mins = np.minimum(
                    mins, dist(cand.schema, c, cand.codes[short], mad=cand.pool.mad())
                )
            mins = np.round(mins, RANK_DECIMALS)
            mins[~alive] = -np.inf
            idx = int(np.flatnonzero(mins == mins.max())[0])  # ties: cheapest first
        choice = int(short[idx])
        out.append(choice)
        chosen_codes.append(cand.codes[choice])
        alive &= cand.keys[short] != cand.keys[choice]
    return out
