"""The two-routes scenario is built as its docstring says: route A approves both
communities, route B the majority only, at equal cost; the hand-set model is the stated
score; Wachter splits a majority member's recourse over both routes (why it fails the
group criteria by construction:
only the route-A half of it counts for a minority twin)."""

from __future__ import annotations

import numpy as np
import pytest

from recourse_engine.datasets import DATASETS, load_dataset, route_scenario
from recourse_engine.encoding import normalise
from recourse_engine.gower import gower_distance
from recourse_engine.methods import Wachter

#: torch on one thread (tests/conftest.py): the cores are shared
pytestmark = pytest.mark.usefixtures("one_torch_thread")

A, B, H, M = 0, 1, 2, 5  # columns: route_a, route_b, history, age, region, community


def stated_score(codes: np.ndarray) -> np.ndarray:
    """The docstring's score, s = 2 a' + 2 b' [majority] + 3 h' − 2."""
    majority = codes[:, M] == 2
    return 2 * codes[:, A] / 100 + 2 * codes[:, B] / 100 * majority + 3 * codes[:, H] / 100 - 2


@pytest.fixture(scope="module")
def scenario():
    data = route_scenario(seed=3, n=200)
    model = data.decision_model()
    rejected = data.codes[~model.approves(data.codes)]
    return data, model, rejected


def test_registered_like_the_other_scenarios():
    assert "fair_scenario_routes" in DATASETS
    data = load_dataset("fair_scenario_routes", seed=1)
    assert data.name == "fair_scenario_routes" and data.sensitive == "community"
    assert np.array_equal(data.group, (data.codes[:, M] == 2).astype(int))


def test_the_model_is_the_stated_score(scenario):
    data, model, _ = scenario
    rng = np.random.default_rng(0)
    n = 500
    codes = np.column_stack(
        [
            rng.uniform(0, 100, n),
            rng.uniform(0, 100, n),
            rng.uniform(0, 100, n),
            rng.uniform(18, 70, n),
            rng.integers(1, 3, n),
            rng.integers(1, 3, n),
        ]
    )
    p = model.predict_proba(codes)
    assert np.allclose(np.log(p / (1 - p)), 4 * stated_score(codes), atol=1e-6)


def test_before_recourse_the_community_does_not_matter(scenario):
    data, model, rejected = scenario
    flipped = data.codes.copy()
    flipped[:, M] = 3 - flipped[:, M]
    assert np.allclose(model.predict_proba(flipped), model.predict_proba(data.codes))
    groups = data.group[~model.approves(data.codes)]
    assert len(rejected) > 40 and {0, 1} <= set(groups.tolist())


def test_route_a_works_for_both_route_b_for_the_majority_only(scenario):
    data, model, x = scenario
    gap = 100 * (2 - 3 * x[:, H] / 100) / 2  # hours either route needs, by the score
    assert gap.max() <= 40.0
    on_a, on_b, short_a = x.copy(), x.copy(), x.copy()
    on_a[:, A] += gap + 0.5
    on_b[:, B] += gap + 0.5
    short_a[:, A] += np.maximum(gap - 0.5, 0)
    majority = x[:, M] == 2
    assert model.approves(on_a).all()
    assert np.array_equal(model.approves(on_b), majority)
    assert not model.approves(short_a).any()
    schema = data.schema
    assert np.allclose(gower_distance(schema, x, on_a), gower_distance(schema, x, on_b))
    za, zb, z0 = (normalise(schema, v) for v in (on_a, on_b, x))
    assert np.allclose(np.linalg.norm(za - z0, axis=1), np.linalg.norm(zb - z0, axis=1))


def test_wachter_splits_a_majority_recourse_over_both_routes(scenario):
    data, model, x = scenario
    x = x[:30]
    cf = Wachter(seed=0).fit(data, model).get_counterfactuals(x)
    assert cf.valid.all()
    da, db = (cf.counterfactuals[:, j] - x[:, j] for j in (A, B))
    majority = x[:, M] == 2
    assert majority.any() and (~majority).any()
    assert np.allclose(da[majority], db[majority], atol=1e-3) and (db[majority] > 0).all()
    assert np.all(db[~majority] == 0) and (da[~majority] > 0).all()
    twin = x[majority].copy()
    twin[:, M] = 1
    twin[:, A] += da[majority]
    twin[:, B] += db[majority]
    gap = 100 * (2 - 3 * x[majority, H] / 100) / 2
    ok = model.approves(twin)  # only the route-A half counts for the minority twin
    assert np.array_equal(ok, da[majority] >= gap) and not ok.all()
