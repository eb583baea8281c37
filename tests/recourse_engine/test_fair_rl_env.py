"""fair_rl's environment never changes a fixed item and never moves an up/down item the
forbidden way, whatever the schema, the state and the action (hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recourse_engine.methods.base import MethodError
from recourse_engine.methods.fair_rl.fair_rl_env import (
    ActionMap,
    FairRecourseEnv,
    FairRecourseVectorEnv,
    Transition,
)
from recourse_engine.schema import load_schema

from .random_schemas import profile_items

#: a numeric item's range: min in -50..50, width 0.5..100
NUMERIC_RANGES = st.floats(-50, 50, allow_nan=False).flatmap(
    lambda lo: st.floats(0.5, 100).map(lambda width: (lo, lo + width))
)


@st.composite
def schemas(draw):
    items = draw(profile_items(6, NUMERIC_RANGES))
    if all(it["constraint"] == "fixed" for it in items):
        items[0]["constraint"] = "any"
    return load_schema({"name": "h", "profile_items": items})


def draw_codes(data, schema, n):
    cols = []
    for it in schema.items:
        if it.is_numeric:
            v = data.draw(st.lists(st.floats(it.min_value, it.max_value), min_size=n, max_size=n))
        else:
            v = data.draw(st.lists(st.integers(1, it.n_options), min_size=n, max_size=n))
        cols.append(np.asarray(v, dtype=float))
    return np.column_stack(cols)


def check_move(schema, before, after):
    for j, it in enumerate(schema.items):
        b, a = before[:, j], after[:, j]
        assert it.valid(a).all(), it.key
        if it.constraint == "fixed":
            assert np.array_equal(a, b), it.key
        elif it.constraint == "up":
            assert (a >= b).all(), it.key
        elif it.constraint == "down":
            assert (a <= b).all(), it.key


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=schemas(), data=st.data())
def test_action_map_respects_every_constraint(schema, data):
    amap = ActionMap(schema)
    n = data.draw(st.integers(1, 5))
    x = draw_codes(data, schema, n)
    acts = data.draw(
        st.lists(
            st.lists(st.floats(-3, 3, allow_nan=False), min_size=amap.dim, max_size=amap.dim),
            min_size=n,
            max_size=n,
        )
    )
    y = amap.apply(x, np.asarray(acts, dtype=float))
    check_move(schema, x, y)
    assert set(amap.actionable) == {
        j for j, it in enumerate(schema.items) if it.constraint != "fixed" and it.span > 0
    }


class Half:
    relative_to_factual = False

    def predict_proba(self, codes, income=None, *, factual_income=None):
        return np.full(len(np.atleast_2d(codes)), 0.25)

    def approves(self, codes, income=None, *, factual_income=None):
        return self.predict_proba(codes) >= 0.5


def zero_reward(x0, prev, nxt, p_prev, p_next, approved, done, idx):
    return np.zeros(len(x0)), {}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=schemas(), data=st.data())
def test_env_episodes_never_leave_the_constraints_relative_to_the_factual(schema, data):
    x0s = draw_codes(data, schema, 3)
    amap = ActionMap(schema)
    horizon = data.draw(st.integers(1, 4))
    trans = Transition(
        schema, amap, Half().predict_proba, zero_reward, horizon, np.zeros(3, int), 0
    )
    env = FairRecourseVectorEnv(trans, x0s, 2, seed=data.draw(st.integers(0, 99)))
    env.reset(seed=1)
    assert env.observation_space.shape[0] == 2
    rng = np.random.default_rng(data.draw(st.integers(0, 99)))
    for _ in range(2 * horizon + 1):
        prev = env.x.copy()
        _, r, term, trunc, info = env.step(rng.uniform(-2, 2, (2, amap.dim)))
        check_move(schema, prev, info["next"])  # this step
        check_move(schema, info["factual"], info["next"])  # the whole episode so far
        assert not term.any()  # the model never approves
        assert (trunc == (env.t == 0)).all()  # ended rows were reset in the same step
    single = FairRecourseEnv(trans, x0s)
    obs, _ = single.reset(seed=3, options={"factual": 1})
    assert single.observation_space.contains(obs)
    obs, reward, term, trunc, info = single.step(np.ones(amap.dim, dtype=np.float32))
    assert reward == 0.0 and not term and trunc == (horizon == 1)
    check_move(schema, x0s[1:2], info["next"][None, :])


def test_nothing_actionable_is_refused():
    schema = load_schema(
        {
            "name": "frozen",
            "profile_items": [
                {"key": "a", "type": "numeric", "min": 0, "max": 1, "constraint": "fixed"},
                {"key": "b", "type": "binary", "options": ["x", "y"], "constraint": "fixed"},
            ],
        }
    )
    with pytest.raises(MethodError, match="nothing actionable"):
        ActionMap(schema)
