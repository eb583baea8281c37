"""How a pool strategy chooses among one profile's admissible candidates.

These live apart from `selection` (which finds the candidates and applies a design) so that
the strategy registry can name them without importing the search, and so that the balanced
strategies in `methods/` rank with exactly the same tie-breaking as the plain ones: every
ranking strategy goes through `PickRequest.lowest`.

The lowest-cost parts of a design (`sparsest`, `proximate`, `lowest_cost@d`) choose
jointly (`lowest_jointly`) rather than one after the other, because each recourse's label is
a claim to the participant and the analyst: "most proximate" must be the most proximate.
Picked in turn, the sparsest pick could take the one most proximate profile while another,
equally sparse one was free, leaving `proximate` with the second best. A joint choice keeps
every part minimal whenever distinct profiles allow it; only when they cannot (one profile
is the only minimal one for two parts) does the later part take the next best.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .distances import RANK_DECIMALS

if TYPE_CHECKING:
    from .design import DesignPart
    from .selection import Candidates
    from .strategies import PoolFit

DIVERSE_SHORTLIST = 20  # low-cost candidates per requested diverse pick


@dataclass
class PickRequest:
    """One design part's turn to pick.

    `available[pos]` is False for candidates equal to an earlier pick; `picked` holds the
    positions picked before: the lowest-cost parts' (they choose first), then those of the
    earlier parts in design order. A pick function returns up to `part.k` positions
    into the candidate arrays, all available; the caller enforces distinctness. A strategy
    with a model fitted on the pool (EBR's densities, IBR's encoder) gets its `pool_fit`
    and reads the fit with `fitted()`.
    """

    cand: Candidates
    part: DesignPart
    rng: np.random.Generator
    available: np.ndarray
    picked: list[int]
    pool_fit: PoolFit | None = None

    def fitted(self) -> Any:
        """The strategy's model fitted on the candidates' pool: the one attached to it, or
        one fitted with the defaults on first use."""
        if self.pool_fit is None:
            raise ValueError(f"strategy {self.part.strategy!r} fits nothing on the pool")
        return self.pool_fit.fitted(self.cand.schema, self.cand.pool)

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


def robust_lowest(req: PickRequest) -> list[int]:
    """`robust@d`: the k lowest costs among the candidates approved by every model of the
    study's set (`Candidates.robust`), topped up with the cheapest others when fewer are
    robust (the strategy prefers robust plans; each pick records whether it is one). With
    no set (a single-model study) every admissible candidate is robust."""
    cost = req.cand.distance(req.part)
    robust = req.cand.robust
    if robust is None:
        return req.lowest(cost)
    out = req.lowest(cost, among=robust)
    if len(out) < req.part.k:
        others = req.available & ~robust
        for pos in out:
            others &= ~req.cand.same_profile(pos)
        rest = PickRequest(req.cand, req.part, req.rng, others, req.picked)
        out += rest.lowest(cost)[: req.part.k - len(out)]
    return out


def uniform(req: PickRequest) -> list[int]:
    """`random`: equal costs, so every available candidate ties and each pick is uniform."""
    return req.lowest(np.zeros(len(req.cand)))


def diverse(req: PickRequest) -> list[int]:
    """`diverse@d`: greedy max-min under d among the cheapest candidates. The first pick is
    the cheapest; each next one maximises its smallest distance to everything picked so
    far (`req.picked` included, so with a lowest-cost part in the design even the first)."""
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


# ---------------------------------------------------------------------------------------
# joint choice of the lowest-cost parts


@dataclass
class _Target:
    """What a lowest-cost part's picks must be to be minimal: every profile cheaper than the
    threshold (fewer than k of them) and `need` distinct profiles at the threshold. A cost is
    a function of the profile, so a profile's rows are all in `below`, all in `at`, or in
    neither."""

    cost: np.ndarray  # rounded cost of every candidate
    below: np.ndarray  # candidates every minimal choice takes
    at: np.ndarray  # candidates at the threshold
    need: int  # distinct profiles to take from `at`


def _target(cost: np.ndarray, keys: np.ndarray, available: np.ndarray, k: int) -> _Target:
    left = available.copy()
    below = np.zeros(len(cost), dtype=bool)
    taken = 0
    while left.any():
        best = cost[left].min()
        at = left & (cost == best)
        short = k - taken
        n = 1 if short == 1 else len(np.unique(keys[at]))
        if n >= short:
            return _Target(cost, below, at, short)
        below |= at
        taken += n
        left &= ~at
    # fewer profiles than k: minimal means taking every one of them
    return _Target(cost, below, np.zeros(len(cost), dtype=bool), 0)


def _feasible(
    targets: list[_Target], needs: list[int], keys: np.ndarray, available: np.ndarray
) -> bool:
    """Whether distinct available profiles can give every target its `below` profiles and
    `needs[i]` profiles at its threshold (a bipartite matching)."""
    forced = np.zeros(len(keys), dtype=bool)
    for t in targets:
        mine = t.below & available
        if (forced & mine).any():
            return False  # a profile two parts both have to take
        forced |= mine
    eligible = [t.at & available & ~forced for t in targets]
    if all(n <= 1 for n in needs) and not any(
        (a & b).any() for a, b in itertools.combinations(eligible, 2)
    ):  # the common case: nothing shared
        return all(e.any() for e, n in zip(eligible, needs, strict=True) if n == 1)
    union = np.logical_or.reduce(eligible) if eligible else forced
    rows = np.flatnonzero(union)
    profiles, inverse = np.unique(keys[rows], return_inverse=True)
    member = np.zeros((len(targets), len(profiles)), dtype=bool)
    for i, e in enumerate(eligible):
        member[i, inverse[e[rows]]] = True
    shared = member.sum(axis=0) > 1
    # a profile only one part can use never hurts another: spend those first
    private = (member & ~shared).sum(axis=1)
    slots = [i for i, n in enumerate(needs) for _ in range(max(0, n - int(private[i])))]
    if not slots:
        return True
    options = [np.flatnonzero(member[i] & shared).tolist() for i in range(len(targets))]
    owner: dict[int, int] = {}  # shared profile -> slot

    def augment(slot: int, seen: set[int]) -> bool:
        for prof in options[slots[slot]]:
            if prof in seen:
                continue
            seen.add(prof)
            if prof not in owner or augment(owner[prof], seen):
                owner[prof] = slot
                return True
        return False

    return all(augment(s, set()) for s in range(len(slots)))


def lowest_jointly(
    cand: Candidates,
    parts: list[DesignPart],
    costs: list[np.ndarray],
    rng: np.random.Generator,
    available: np.ndarray,
) -> list[list[int]]:
    """Positions for each lowest-cost part (`costs[i]`: part i's rounded costs), distinct
    profiles throughout, so that each part's picks are its k lowest costs whenever distinct
    profiles allow it.

    Parts are protected in design order: a part joins when it and every part already
    protected can all be minimal at once. Protected parts then pick in design order, cheapest
    first, ties broken uniformly at random except that a profile whose choice would leave a
    later protected part short is passed over. The parts left unprotected pick the lowest
    costs among what remains, as a part picked alone would.
    """
    keys = cand.keys
    avail = available.copy()
    targets = [_target(c, keys, avail, p.k) for c, p in zip(costs, parts, strict=True)]
    protected: list[int] = []
    for i in range(len(parts)):
        if not protected:  # a part alone can always be minimal
            protected.append(i)
            continue
        trial = [targets[j] for j in [*protected, i]]
        if _feasible(trial, [t.need for t in trial], keys, avail):
            protected.append(i)
    out: list[list[int]] = [[] for _ in parts]
    for n, i in enumerate(protected):
        later = [targets[j] for j in protected[n + 1 :]]
        out[i] = _pick_protected(cand, targets[i], later, rng, avail)
    for i in (j for j in range(len(parts)) if j not in protected):
        out[i] = PickRequest(cand, parts[i], rng, avail, []).lowest(costs[i])
        for pos in out[i]:
            avail &= ~cand.same_profile(pos)
    return out


def _pick_protected(
    cand: Candidates,
    t: _Target,
    later: list[_Target],
    rng: np.random.Generator,
    avail: np.ndarray,
) -> list[int]:
    """One protected part's picks; removes them from `avail`."""
    out: list[int] = []
    left = avail & t.below
    while left.any():  # every profile under the threshold, cheapest first
        best = t.cost[left].min()
        choice = int(rng.choice(np.flatnonzero(left & (t.cost == best))))
        out.append(choice)
        left &= ~cand.same_profile(choice)
        avail &= ~cand.same_profile(choice)
    others = np.logical_or.reduce([u.below for u in later]) if later else None
    left = avail & t.at if others is None else avail & t.at & ~others
    need = t.need
    while need > 0 and left.any():
        choice = int(rng.choice(np.flatnonzero(left)))
        same = cand.same_profile(choice)
        left &= ~same
        if any(u.at[choice] for u in later) and not _feasible(
            [t, *later], [need - 1, *(u.need for u in later)], cand.keys, avail & ~same
        ):
            continue  # another part needs this profile to stay minimal
        out.append(choice)
        avail &= ~same
        need -= 1
    return out
