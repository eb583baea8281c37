"""Property tests: selections never break a constraint or the income rule, sparsest and
proximate equal brute-force minima, picks are distinct, shortfalls are reported."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recourse_engine import PoolIndex, load_schema, pool_from_frame

from .random_schemas import profile_items
from .reference import slow_admissible, slow_proximity, slow_respects, slow_sparsity


@st.composite
def schema_pool_profile(draw):
    items = draw(profile_items(5, st.sampled_from([1, 4, 10]).map(lambda hi: (0, hi))))
    schema = load_schema({"name": "h", "profile_items": items})

    def value(it):
        if it.is_numeric:
            return draw(st.sampled_from([0.0, 0.5, 1.0, float(it.high)]))
        return float(draw(st.integers(1, it.n_options)))

    n = draw(st.integers(1, 40))
    rows = [[value(it) for it in schema.items] for _ in range(n)]
    incomes = draw(st.lists(st.integers(0, 12), min_size=n, max_size=n))
    frame = pd.DataFrame(rows, columns=schema.keys)
    frame.insert(0, "income", [i * 100_000 for i in incomes])
    frame.insert(0, "id", [f"r{i}" for i in range(n)])
    pool = pool_from_frame(frame, schema)
    x = np.array([value(it) for it in schema.items])
    income = draw(st.integers(0, 9)) * 75_000  # hits 4/3 boundaries exactly (75k * 4/3 = 100k)
    return schema, pool, x, float(income)


def _check_common(schema, pool, x, income, sel, admissible):
    assert sel.n_admissible == len(admissible)
    distinct = {tuple(pool.codes[i]) for i in admissible}
    assert len(sel.picks) == min(sel.requested, len(distinct))
    assert sel.shortfall == sel.requested - len(sel.picks)
    seen_rows, seen_profiles = set(), set()
    for p in sel.picks:
        c = list(pool.codes[p.pool_index])
        assert np.array_equal(p.codes, pool.codes[p.pool_index])
        assert 3 * pool.income[p.pool_index] >= 4 * income  # the income rule, in integers
        assert slow_respects(schema, list(x), c)
        assert p.sparsity == slow_sparsity(schema, list(x), c) > 0
        assert abs(p.proximity - slow_proximity(schema, list(x), c)) < 1e-9
        assert p.changed == [schema.keys[j] for j in range(schema.d) if x[j] != c[j]]
        assert p.pool_index not in seen_rows and tuple(c) not in seen_profiles
        seen_rows.add(p.pool_index)
        seen_profiles.add(tuple(c))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=schema_pool_profile(), seed=st.integers(0, 2**32 - 1))
def test_reference_design_is_admissible_minimal_and_distinct(data, seed):
    schema, pool, x, income = data
    sel = PoolIndex(schema, pool).select(x, income, "sparsest:1,proximate:1,random:3", seed=seed)
    admissible = slow_admissible(schema, pool, list(x), income)
    _check_common(schema, pool, x, income, sel, admissible)
    if not admissible:
        return
    first = sel.picks[0]
    assert first.strategy == "sparsest"
    assert first.sparsity == min(
        slow_sparsity(schema, list(x), list(pool.codes[i])) for i in admissible
    )
    rest = [i for i in admissible if tuple(pool.codes[i]) != tuple(first.codes)]
    if rest:
        second = sel.picks[1]
        assert second.strategy == "proximate"
        best = min(slow_proximity(schema, list(x), list(pool.codes[i])) for i in rest)
        assert abs(second.proximity - best) < 1e-9
    assert all(p.strategy == "random" for p in sel.picks[2:])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=schema_pool_profile(),
    seed=st.integers(0, 2**32 - 1),
    design=st.sampled_from(
        [
            "proximate:2,sparsest:2",
            "lowest_cost@l2:3",
            "diverse@proximity:3,random:2",
            "lowest_cost@weighted[1,0.5,0,2]:2,diverse@l2:2",
            "lowest_cost@linf:1,random:4",
        ]
    ),
)
def test_other_designs_stay_admissible_and_distinct(data, seed, design):
    schema, pool, x, income = data
    sel = PoolIndex(schema, pool).select(x, income, design, seed=seed)
    _check_common(schema, pool, x, income, sel, slow_admissible(schema, pool, list(x), income))


@settings(max_examples=100, deadline=None)
@given(data=schema_pool_profile(), seed=st.integers(0, 2**32 - 1))
def test_same_seed_same_selection(data, seed):
    schema, pool, x, income = data
    index = PoolIndex(schema, pool)
    a = index.select(x, income, "sparsest:1,proximate:1,random:3", seed=seed)
    b = index.select(x, income, "sparsest:1,proximate:1,random:3", seed=seed)
    assert [p.pool_index for p in a.picks] == [p.pool_index for p in b.picks]


def test_ties_are_broken_at_random_across_seeds():
    schema = load_schema(
        {
            "profile_items": [
                {"key": "a", "type": "ordinal", "options": ["1", "2", "3"], "constraint": "any"}
            ]
        }
    )
    # four rows tie at sparsity 1 and proximity 0.5
    frame = pd.DataFrame({"id": list("pqrs"), "income": [10] * 4, "a": [2, 2, 2, 2]})
    frame.loc[len(frame)] = ["t", 10, 3]
    index = PoolIndex(schema, pool_from_frame(frame, schema))
    proximate = {index.select([1], 1.0, "proximate:1", seed=s).picks[0].pool_id for s in range(40)}
    # t (proximity 1) is never the most proximate; the tied rows p..s each come up
    assert proximate <= set("pqrs") and len(proximate) > 1
    sparsest = {index.select([1], 1.0, "sparsest:1", seed=s).picks[0].pool_id for s in range(60)}
    # all five rows change one item: every one of them ties for sparsest
    assert "t" in sparsest and len(sparsest) > 2


def test_other_factual_relative_models_are_applied_per_search():
    """A model whose approval depends on x (here: income at least 2x, position not lower)
    is evaluated for each factual; picks are exactly the brute-force admissible set's."""
    from dataclasses import dataclass

    from recourse_engine import carloan_schema, synth_pool

    @dataclass
    class Doubling:
        name: str = "doubling"
        schema_hash: str | None = None
        relative_to_factual: bool = True

        def approves(self, codes, income=None, *, factual_income=None):
            return np.asarray(income) >= 2 * factual_income

        def predict_proba(self, codes, income=None, *, factual_income=None):
            return self.approves(codes, income, factual_income=factual_income).astype(float)

    schema = carloan_schema()
    frame = synth_pool(schema, n=300, seed=8)
    pool = pool_from_frame(frame, schema)
    index = PoolIndex(schema, pool, Doubling())
    x = frame.loc[0, schema.keys].to_numpy(float)
    sel = index.select(x, 3_000_000, "random:50", seed=0)
    expected = {
        i
        for i in range(len(pool))
        if pool.income[i] >= 6_000_000
        and slow_respects(schema, list(x), list(pool.codes[i]))
        and slow_sparsity(schema, list(x), list(pool.codes[i])) > 0
    }
    assert sel.n_admissible == len(expected)
    assert {p.pool_index for p in sel.picks} <= expected
