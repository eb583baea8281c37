"""fair_rl: a short seeded training on the fair-recourse scenario (a known fair solution)
reaches the paper's targets; a fitted policy pickles; groups come from the data, a schema
item or a pool column; bad input is refused with a clear message."""

from __future__ import annotations

import pickle
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from recourse_engine.datasets import fair_scenario, synthetic
from recourse_engine.methods import load_method, save_method
from recourse_engine.methods.base import MethodError
from recourse_engine.methods.fair_rl import FairRL
from recourse_engine.metrics import success_rates
from recourse_engine.schema import load_schema

SHORT = {"steps": 300}


#: torch on one thread (tests/conftest.py): the cores are shared
pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def scenario():
    """400 people, group 0 lower by one sd, a decision model biased against it: every
    rejected person can still be approved (success rate 1 in both groups is attainable)."""
    data = fair_scenario(seed=0, n=400, disparity=1.0, bias=1.0)
    return data, data.decision_model()


@pytest.fixture(scope="module")
def fitted(scenario):
    data, model = scenario
    return FairRL(seed=0, reward="hybrid", **SHORT).fit(data, model)


def test_hybrid_reward_reaches_high_success_with_small_gap(scenario, fitted):
    data, model = scenario
    rejected = ~model.approves(data.codes)
    res = fitted.get_counterfactuals(data.codes[rejected])
    per, pd_ = success_rates(res.valid, data.group[rejected])
    assert set(per) == {"0", "1"}
    assert res.valid.mean() >= 0.9
    assert pd_ <= 0.1
    # the counterfactuals went through the finaliser: approved, fixed items untouched
    ok = res.valid
    assert model.approves(res.counterfactuals[ok]).all()
    fixed = [data.schema.index(k) for k in ("age", "region", "sex")]
    assert np.array_equal(res.counterfactuals[ok][:, fixed], data.codes[rejected][ok][:, fixed])
    assert set(res.status[ok]) == {"valid"}


def test_policy_alone_reaches_the_target_without_extra_rollouts(scenario, fitted):
    data, model = scenario
    rejected = ~model.approves(data.codes)
    one = pickle.loads(pickle.dumps(fitted))
    one.rollouts = 1  # the mean action only
    res = one.get_counterfactuals(data.codes[rejected])
    assert res.valid.mean() >= 0.9
    assert success_rates(res.valid, data.group[rejected])[1] <= 0.1


def test_seeded_training_is_reproducible_and_pickles(scenario, fitted, tmp_path):
    data, model = scenario
    x = data.codes[~model.approves(data.codes)][:40]
    tiny = {"steps": 60, "warmup": 10, "batch": 64, "n_envs": 16}
    one, two = (FairRL(seed=5, **tiny).fit(data, model) for _ in range(2))
    assert np.array_equal(
        one.get_counterfactuals(x).counterfactuals,
        two.get_counterfactuals(x).counterfactuals,
        equal_nan=True,
    )
    a = fitted.get_counterfactuals(x)
    restored = pickle.loads(pickle.dumps(fitted))
    c = restored.get_counterfactuals(x)
    assert np.array_equal(a.counterfactuals, c.counterfactuals, equal_nan=True)
    for i in (0, 7, 23):  # a person's plan does not depend on who else is in the batch
        alone = fitted.get_counterfactuals(x[i : i + 1]).counterfactuals
        # the same plan; the policy runs in float32, whose batched and single-row kernels
        # round differently in the last digits of a continuous item
        np.testing.assert_allclose(a.counterfactuals[i : i + 1], alone, rtol=1e-6, atol=0)
    path = save_method(fitted, tmp_path / "fair_rl.joblib")
    d = load_method(path, data.schema).get_counterfactuals(x[:1])  # one participant
    assert np.array_equal(a.counterfactuals[:1], d.counterfactuals, equal_nan=True)


def test_groups_from_an_item_a_pool_column_or_an_intersection(scenario):
    data, model = scenario
    tiny = {"steps": 5, "warmup": 5, "batch": 32, "n_envs": 8}
    m = FairRL(group="region", **tiny).fit(data, model)
    assert m.group_labels_ == ["1", "2"]
    m = FairRL(group="sex,region", clusters=3, **tiny).fit(data, model)
    assert m.group_labels_ == ["1|1", "1|2", "2|1", "2|2"]
    assert m.centres_.shape[0] == 3
    pool_like = SimpleNamespace(
        schema=data.schema,
        codes=data.codes,
        extra=pd.DataFrame({"gender": np.where(data.group == 1, "m", "f")}),
    )
    m = FairRL(group="gender", **tiny).fit(pool_like, model)
    assert m.group_labels_ == ["f", "m"]
    assert m.get_counterfactuals(data.codes[:3]).counterfactuals.shape == (3, data.schema.d)


def test_bad_input_is_refused_clearly(scenario):
    data, model = scenario
    with pytest.raises(MethodError, match="unknown reward 'fairest'; known: none, individual_ee"):
        FairRL(reward="fairest")
    with pytest.raises(MethodError, match="steps must be an integer >= 1"):
        FairRL(steps=0)
    no_group = SimpleNamespace(schema=data.schema, codes=data.codes)
    with pytest.raises(MethodError, match="no protected attribute; pass group="):
        FairRL(**SHORT).fit(no_group, model)
    with pytest.raises(MethodError, match="'religion' is neither a schema item nor a column"):
        FairRL(group="religion", **SHORT).fit(data, model)
    frozen = load_schema(
        {
            "name": "frozen",
            "profile_items": [
                {"key": "a", "type": "numeric", "min": 0, "max": 1, "constraint": "fixed"},
                {"key": "s", "type": "binary", "options": ["f", "m"], "constraint": "fixed"},
            ],
        }
    )
    syn = synthetic(seed=0)
    stuck = SimpleNamespace(schema=frozen, codes=syn.codes[:, [0, 2]], group=syn.group)
    with pytest.raises(MethodError, match="nothing actionable"):
        FairRL(**SHORT).fit(stuck, model_for(frozen))
    with pytest.raises(MethodError, match="holds a single value"):
        one = SimpleNamespace(schema=data.schema, codes=data.codes, group=np.zeros(len(data)))
        FairRL(**SHORT).fit(one, model)
    with pytest.raises(MethodError, match="call fit"):
        FairRL().get_counterfactuals(data.codes[:1])


def model_for(schema):
    class Never:
        relative_to_factual = False

        def predict_proba(self, codes, income=None, *, factual_income=None):
            return np.zeros(len(np.atleast_2d(codes)))

        def approves(self, codes, income=None, *, factual_income=None):
            return self.predict_proba(codes) >= 0.5

    return Never()
