"""Exact labels (issue 13): the lowest-cost parts of a design are minimal together whenever
some assignment of distinct profiles makes them so, checked against a brute force that
enumerates every such assignment; every pick's ranks against a direct count."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recourse_engine import PoolIndex, load_schema, parse_design, pool_from_frame
from recourse_engine.distances import RANK_DECIMALS

from .reference import slow_admissible, slow_l2, slow_linf, slow_proximity, slow_sparsity
from .test_selection_properties import schema_pool_profile

SLOW = {"sparsity": slow_sparsity, "proximity": slow_proximity, "l2": slow_l2, "linf": slow_linf}
DESIGNS = [
    "sparsest:1,proximate:1,random:3",
    "proximate:1,sparsest:1",
    "sparsest:2,proximate:1",
    "sparsest:1,lowest_cost@l2:1,proximate:1",
    "random:2,proximate:1,sparsest:1",
    "sparsest:1,proximate:2,lowest_cost@linf:1",
    "diverse@l2:1,sparsest:1,proximate:1",
    "sparsest:2,proximate:2",
    "lowest_cost@l2:2,proximate:2,sparsest:1",
]


def _cost(schema, x, profile, distance: str) -> float:
    return round(SLOW[distance](schema, list(x), list(profile)), RANK_DECIMALS)


def _ranked_parts(design: str) -> list[tuple[str, int, str]]:
    """(label, k, distance name) of each lowest-cost part, in design order."""
    parts = parse_design(design).parts
    lowest = ("sparsest", "proximate", "lowest_cost")
    return [(p.label, p.k, p.distance.name) for p in parts if p.strategy in lowest]


def _minimal(costs: list[float], chosen: tuple, k: int) -> bool:
    """Whether `chosen` (indices into costs) has the k smallest costs of all profiles."""
    return len(chosen) == k and sorted(costs[i] for i in chosen) == sorted(costs)[:k]


def _joint_exists(per_part_costs: list[list[float]], ks: list[int]) -> bool:
    """Brute force: is there an assignment of distinct profiles to the parts in which every
    part's picks are minimal under its distance?"""
    n = len(per_part_costs[0]) if per_part_costs else 0
    options = [
        [c for c in itertools.combinations(range(n), k) if _minimal(costs, c, k)]
        for costs, k in zip(per_part_costs, ks, strict=True)
    ]
    for assignment in itertools.product(*options):
        used = [i for chosen in assignment for i in chosen]
        if len(used) == len(set(used)):
            return True
    return False


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=schema_pool_profile(),
    seed=st.integers(0, 2**32 - 1),
    design=st.sampled_from(DESIGNS),
)
def test_lowest_cost_parts_are_minimal_together_whenever_an_assignment_allows(data, seed, design):
    schema, pool, x, income = data
    sel = PoolIndex(schema, pool).select(x, income, design, seed=seed)
    admissible = slow_admissible(schema, pool, list(x), income)
    profiles = sorted({tuple(pool.codes[i]) for i in admissible})
    parts = _ranked_parts(design)
    costs = [[_cost(schema, x, p, dist) for p in profiles] for _, _, dist in parts]
    by_label = {label: [p for p in sel.picks if p.strategy == label] for label, _, _ in parts}

    def picked_minimal(n: int) -> bool:
        label, k, dist = parts[n]
        got = sorted(_cost(schema, x, p.codes, dist) for p in by_label[label])
        return got == sorted(costs[n])[:k]

    if _joint_exists(costs, [k for _, k, _ in parts]):
        assert all(picked_minimal(n) for n in range(len(parts)))
        return
    # no assignment: the first lowest-cost part is still minimal, and with two parts the
    # later one has the next best, the lowest among the profiles the first left
    assert picked_minimal(0) or len(profiles) < parts[0][1]
    if len(parts) == 2 and len(profiles) > parts[0][1]:
        first = {tuple(p.codes) for p in by_label[parts[0][0]]}
        rest = [c for c, p in zip(costs[1], profiles, strict=True) if p not in first]
        got = sorted(_cost(schema, x, p.codes, parts[1][2]) for p in by_label[parts[1][0]])
        assert got == sorted(rest)[: parts[1][1]]
    if design == "sparsest:1,proximate:1,random:3" and len(profiles) > 1:
        # one profile is the only sparsest and the only most proximate: marked as both
        (sparsest,) = by_label["sparsest"]
        assert (sparsest.sparsity_rank, sparsest.proximity_rank) == (1, 1)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=schema_pool_profile(),
    seed=st.integers(0, 2**32 - 1),
    design=st.sampled_from([*DESIGNS, "random:5", "diverse@proximity:3"]),
)
def test_ranks_are_counts_of_strictly_cheaper_admissible_candidates(data, seed, design):
    schema, pool, x, income = data
    sel = PoolIndex(schema, pool).select(x, income, design, seed=seed)
    admissible = slow_admissible(schema, pool, list(x), income)
    for p in sel.picks:
        for distance, rank in (("sparsity", p.sparsity_rank), ("proximity", p.proximity_rank)):
            mine = _cost(schema, x, p.codes, distance)
            cheaper = sum(1 for i in admissible if _cost(schema, x, pool.codes[i], distance) < mine)
            assert rank == 1 + cheaper
        assert p.origin == "pool"


def _index(rows: list[tuple[str, int, int]]) -> PoolIndex:
    """Two ordinal items a, b with options 1..5; every row approved (income 10)."""
    schema = load_schema(
        {
            "profile_items": [
                {"key": k, "type": "ordinal", "options": list("12345"), "constraint": "any"}
                for k in ("a", "b")
            ]
        }
    )
    frame = pd.DataFrame(rows, columns=["id", "a", "b"])
    frame.insert(1, "income", 10)
    return PoolIndex(schema, pool_from_frame(frame, schema))


@pytest.mark.parametrize("seed", range(30))
def test_a_second_sparsest_profile_leaves_the_most_proximate_one_free(seed):
    # from x = (1, 1): p and q both change one item; p is the only most proximate (0.25)
    index = _index([("p", 2, 1), ("q", 1, 5), ("r", 3, 3)])
    sel = index.select([1, 1], 1.0, "sparsest:1,proximate:1", seed=seed)
    assert [(p.strategy, p.pool_id) for p in sel.picks] == [("sparsest", "q"), ("proximate", "p")]
    assert [(p.sparsity_rank, p.proximity_rank) for p in sel.picks] == [(1, 2), (1, 1)]


@pytest.mark.parametrize("seed", range(10))
def test_one_profile_both_sparsest_and_most_proximate_is_marked_as_both(seed):
    # p alone changes one item, and is the most proximate: proximate gets the next best
    index = _index([("p", 2, 1), ("q", 3, 2), ("r", 2, 3), ("s", 2, 3)])
    sel = index.select([1, 1], 1.0, "sparsest:1,proximate:1", seed=seed)
    sparsest, proximate = sel.picks
    assert sparsest.pool_id == "p" and (sparsest.sparsity_rank, sparsest.proximity_rank) == (1, 1)
    # q (0.75) is the next most proximate; r and s (0.75) tie with it, all rank 2
    assert proximate.proximity == pytest.approx(0.75) and proximate.proximity_rank == 2
    assert proximate.sparsity_rank == 2


def test_joint_choice_keeps_the_ties_random():
    # x = (1, 1): p, q, t change one item (sparsity 1); p is the only most proximate
    index = _index([("p", 2, 1), ("q", 1, 5), ("t", 5, 1), ("u", 1, 5)])
    chosen = {
        index.select([1, 1], 1.0, "sparsest:1,proximate:1", seed=s).picks[0].pool_id
        for s in range(60)
    }
    assert chosen == {"q", "t", "u"}


def test_ranks_count_candidates_not_profiles():
    # two rows of one profile ahead of r: r ranks 3 in proximity (competition ranking)
    index = _index([("p", 2, 1), ("p2", 2, 1), ("r", 3, 1)])
    sel = index.select([1, 1], 1.0, "random:3", seed=0)
    ranks = {p.pool_id: (p.sparsity_rank, p.proximity_rank) for p in sel.picks}
    assert ranks["r"] == (1, 3) and len(ranks) == 2
