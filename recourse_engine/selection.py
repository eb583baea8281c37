"""Pool search and selection: the admissible counterfactuals of a profile, and a design's picks.

A pool profile x' is *admissible* for x when the decision model approves it
(for the income rule: income(x') >= 4/3 income(x)), every item constraint holds,
and x' differs from x in at least one item. A design's parts then pick from the
admissible set in order, each with its strategy's pick function from the table in
`recourse_engine.strategies` (these in `recourse_engine.picks`):

* `sparsest` / `proximate` / `lowest_cost@d`: the k lowest costs under the
  distance; ties broken uniformly at random with the seed.
* `random`: uniformly at random.
* `diverse@d`: greedy max-min under d among the low-cost candidates: the first
  pick is the cheapest, each next one maximises its smallest distance to
  everything picked so far.

Picks are distinct profiles: never the same pool row twice, and never a row
whose items equal an earlier pick's. When fewer admissible candidates exist
than asked, the selection holds what exists and reports the shortfall; it never
fills up with an inadmissible profile.

Speed: `PoolIndex` sorts the pool by income once, so the income rule's approved
set is a contiguous suffix; a factual-independent model's approved rows are
gathered once. Each search is then one contiguous pass per item over the block's
int8 codes that updates the constraint mask, sparsity and proximity together — no
Python loop over the pool, no (n, d) temporary. Codes of the admissible rows are
gathered only for strategies ranking by another distance.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from .constraints import column_allows
from .decision import DecisionModel, IncomeRule
from .design import Design, DesignError, DesignPart, parse_design
from .distances import CHANGE_TOL, item_costs
from .picks import PickRequest
from .pool import Pool, profile_codes
from .schema import FeatureSchema
from .strategies import get_strategy


@dataclass
class Pick:
    strategy: str
    pool_index: int
    pool_id: str
    codes: np.ndarray
    sparsity: int
    proximity: float
    changed: list[str]


@dataclass
class Selection:
    picks: list[Pick]
    requested: int
    n_admissible: int
    shortfall_by_part: dict[str, int] = field(default_factory=dict)

    @property
    def shortfall(self) -> int:
        return self.requested - len(self.picks)

    @property
    def coverage(self) -> float:
        return len(self.picks) / self.requested if self.requested else 1.0


@dataclass
class Candidates:
    """The admissible set of one factual profile: pool rows, their keys, sparsity, proximity.

    Item codes and the per-item cost matrix are gathered only when a strategy needs a
    distance other than sparsity or proximity.
    """

    schema: FeatureSchema
    x: np.ndarray
    rows: np.ndarray  # original pool indices of admissible candidates
    keys: np.ndarray  # (m,) equal keys <=> equal item values
    sparsity: np.ndarray  # (m,) changed items
    proximity: np.ndarray  # (m,) sum of item costs
    pool: Pool

    def __len__(self) -> int:
        return len(self.rows)

    def same_profile(self, pos: int) -> np.ndarray:
        """Mask of candidates whose items equal candidate pos's (itself included)."""
        return self.keys == self.keys[pos]

    @cached_property
    def codes(self) -> np.ndarray:
        return self.pool.codes[self.rows]

    @cached_property
    def costs(self) -> np.ndarray:
        return item_costs(self.schema, self.x, self.codes)

    def distance(self, part: DesignPart) -> np.ndarray:
        assert part.distance is not None
        name = part.distance.name
        if name == "sparsity":
            return self.sparsity.astype(float)
        if name == "proximity":
            return self.proximity
        return part.distance(self.schema, self.x, self.codes, mad=self.pool.mad())


class PoolIndex:
    """A pool prepared for repeated searches with one decision model."""

    def __init__(self, schema: FeatureSchema, pool: Pool, model: DecisionModel | None = None):
        if pool.schema_hash != schema.hash():
            raise ValueError("pool was validated against a different schema")
        self.schema = schema
        self.pool = pool
        self.model: DecisionModel = model if model is not None else IncomeRule()
        self._income_sorted = isinstance(self.model, IncomeRule)
        # any other model whose approval depends on x is evaluated per search
        self._per_call = self.model.relative_to_factual and not self._income_sorted
        if self._per_call:
            self.order = np.arange(len(pool))
            self.income = pool.income
        elif self._income_sorted:
            if pool.income is None:
                raise ValueError("the income rule needs a pool with an income column")
            self.order = np.argsort(pool.income, kind="stable")
            self.income = pool.income[self.order]
        else:
            approved = np.asarray(self.model.approves(pool.codes, pool.income), dtype=bool)
            self.order = np.flatnonzero(approved)
            self.income = None if pool.income is None else pool.income[self.order]
        sorted_codes = pool.codes[self.order]
        self.keys = profile_keys(schema, sorted_codes)
        # Coded schemas scan small integers: 8x less memory traffic than float64.
        self.coded = not schema.has_numeric and max(it.n_options for it in schema.items) < 127
        dtype = np.int8 if self.coded else float
        self.columns = np.asfortranarray(sorted_codes.astype(dtype))

    def _approved_start(self, income: float | None) -> int:
        if not self._income_sorted:
            return 0
        if income is None or not np.isfinite(income) or income < 0:
            raise ValueError("the income rule needs the factual profile's income (>= 0)")
        approved = self.model.approves(None, self.income, factual_income=income)
        return len(approved) - int(approved.sum())  # income-sorted: approvals are a suffix

    def candidates(self, x: np.ndarray, income: float | None = None) -> Candidates:
        """Admissible candidates of x: one contiguous pass per item over the approved block."""
        x = np.asarray(x, dtype=float)
        start = self._approved_start(income)
        block = self.columns[start:]
        n = block.shape[0]
        if self._per_call:
            ok = np.asarray(
                self.model.approves(self.pool.codes, self.pool.income, factual_income=income),
                dtype=bool,
            ).copy()
        else:
            ok = np.ones(n, dtype=bool)
        sparsity = np.zeros(n, dtype=np.int16)
        proximity = np.zeros(n, dtype=float)
        for j, it in enumerate(self.schema.items):
            col = block[:, j]
            if self.coded:
                xj = int(x[j])
                changed = col != xj
                if it.is_graded:
                    table = np.abs(np.arange(it.n_options + 1) - xj) / it.span
                    proximity += table[col]
                else:
                    proximity += changed
            else:
                xj = float(x[j])
                diff = np.abs(col - xj)
                changed = diff > CHANGE_TOL
                proximity += diff / it.span if it.is_graded else changed
            sparsity += changed
            allowed = column_allows(it.constraint, col, xj, tol=0 if self.coded else CHANGE_TOL)
            if allowed is not None:
                ok &= allowed
        pos = np.flatnonzero(ok & (sparsity > 0))
        return Candidates(
            self.schema,
            x,
            rows=self.order[start + pos],
            keys=self.keys[start + pos],
            sparsity=sparsity[pos],
            proximity=proximity[pos],
            pool=self.pool,
        )

    def select(
        self,
        x: np.ndarray | dict[str, float] | Sequence[float],
        income: float | None,
        design: Design | str,
        seed: int | Sequence[int] | np.random.Generator | None = 0,
    ) -> Selection:
        design = parse_design(design)
        xv = profile_codes(self.schema, x)
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        cand = self.candidates(xv, income)
        return _apply_design(cand, design, rng)


def profile_keys(schema: FeatureSchema, codes: np.ndarray) -> np.ndarray:
    """One integer per row, equal exactly when the rows' item values are equal.

    Coded items give a mixed-radix number when it fits in 63 bits; otherwise (numeric
    items, huge schemas) the rows are numbered by np.unique, once per pool.
    """
    radix = [it.n_options for it in schema.items]
    if not schema.has_numeric and float(np.prod(np.array(radix, dtype=float))) < 2.0**62:
        keys = np.zeros(codes.shape[0], dtype=np.int64)
        for j, r in enumerate(radix):
            keys = keys * r + (codes[:, j].astype(np.int64) - 1)
        return keys
    _, inverse = np.unique(np.ascontiguousarray(codes), axis=0, return_inverse=True)
    return inverse.ravel().astype(np.int64)


def _apply_design(cand: Candidates, design: Design, rng: np.random.Generator) -> Selection:
    available = np.ones(len(cand), dtype=bool)
    picked: list[int] = []
    picks: list[Pick] = []
    shortfalls: dict[str, int] = {}
    sparsity = cand.sparsity
    proximity = cand.proximity
    keys = cand.schema.keys
    for part in design.parts:
        pick = get_strategy(part.strategy).pick
        if pick is None:
            raise DesignError(f"strategy {part.strategy!r} does not pick from the pool")
        chosen = pick(PickRequest(cand, part, rng, available, picked))
        got = 0
        for pos in chosen[: part.k]:
            if not available[pos]:
                raise RuntimeError(f"strategy {part.strategy!r} picked an unavailable candidate")
            available &= ~cand.same_profile(pos)
            picked.append(pos)
            got += 1
            row = int(cand.rows[pos])
            codes = cand.pool.codes[row].copy()
            moved = np.abs(codes - cand.x) > CHANGE_TOL
            picks.append(
                Pick(
                    strategy=part.label,
                    pool_index=row,
                    pool_id=str(cand.pool.ids[row]),
                    codes=codes,
                    sparsity=int(sparsity[pos]),
                    proximity=float(proximity[pos]),
                    changed=[keys[j] for j in np.flatnonzero(moved)],
                )
            )
        if got < part.k:
            shortfalls[part.label] = shortfalls.get(part.label, 0) + part.k - got
    return Selection(picks, design.total, len(cand.rows), shortfalls)


def select_recourses(
    *,
    schema: FeatureSchema,
    pool: Pool,
    codes: np.ndarray | dict[str, float] | Sequence[float],
    income: float | None,
    design: Design | str,
    model: DecisionModel | None = None,
    seed: int | Sequence[int] | np.random.Generator | None = 0,
    index: PoolIndex | None = None,
) -> Selection:
    """Select one profile's recourses; pass a reused `index` to search a pool many times."""
    index = index or PoolIndex(schema, pool, model)
    return index.select(codes, income, design, seed)


def select_many(
    index: PoolIndex,
    profiles: Pool,
    design: Design | str,
    seed: int = 0,
    progress: Any = None,
) -> list[Selection]:
    """Select for every profile of a batch; profile i uses the seed sequence (seed, i), so a
    profile's recourses do not depend on the other profiles in the batch."""
    design = parse_design(design)
    out = []
    rows = range(len(profiles))
    for i in progress(rows) if progress else rows:
        income = None if profiles.income is None else float(profiles.income[i])
        out.append(index.select(profiles.codes[i], income, design, seed=[seed, i]))
    return out
