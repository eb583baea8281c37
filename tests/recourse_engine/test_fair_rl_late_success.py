"""fair_rl's `late_success` counts the episodes that started late enough to finish (an
untrained policy must not read 1.0), and `untrained=True` skips training."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from recourse_engine.datasets import fair_scenario
from recourse_engine.methods.base import MethodError
from recourse_engine.methods.fair_rl import FairRL
from recourse_engine.methods.fair_rl.fair_rl_sac import SAC, SACConfig, train_sac

pytestmark = pytest.mark.usefixtures("one_torch_thread")


class Alternating:
    """One env whose episodes alternate: a success after 1 step, a failure after T = 4
    steps (the truth: half the episodes succeed)."""

    num_envs = 1
    single_action_space = SimpleNamespace(shape=(1,))
    single_observation_space = SimpleNamespace(shape=(2,))
    trans = SimpleNamespace(horizon=4)

    def reset(self, *, seed=None):
        self.k, self.t = 0, 0
        return np.zeros((1, 2), np.float32), {}

    def step(self, a):
        self.t += 1
        success = self.k % 2 == 0
        term = np.array([success])
        trunc = np.array([not success and self.t >= 4])
        info = {}
        if term[0] or trunc[0]:
            info = {"done_rows": np.array([0]), "final_obs": np.zeros((1, 2)),
                    "success": term.copy()}  # fmt: skip
            self.k, self.t = self.k + 1, 0
        return np.zeros((1, 2), np.float32), np.zeros(1), term, trunc, info


def _late(steps):
    agent = SAC(2, 1, SACConfig(8, 1e-3, 0.9, batch=8, device="cpu", buffer=64), seed=0)
    return train_sac(Alternating(), agent, steps, warmup=steps, updates_per_step=1, seed=0)


def test_late_success_counts_started_episodes_that_could_finish():
    # episodes start at steps 0, 1 | 5, 6 | 10, 11 | 15, 16 | ... (success, failure)
    # steps = 20: the window starts at 15 and an episode must start by 20 − 4 = 16
    got = _late(20)
    assert got["late_episodes"] == 2 and got["late_success"] == 0.5
    # steps = 40: starts 30 (s), 31 (f), 35 (s), 36 (f)
    got = _late(40)
    assert got["late_episodes"] == 4 and got["late_success"] == 0.5
    # one step: only the first episode's success has ended; the earlier count (episodes
    # that *ended* in the last quarter) read 1.0 here. Now nothing qualifies: NaN.
    got = _late(1)
    assert got["late_episodes"] == 0 and math.isnan(got["late_success"])


def test_an_untrained_policy_does_not_read_full_success():
    data = fair_scenario(seed=0, n=200, disparity=1.0, bias=1.0)
    model = data.decision_model()
    tiny = {"batch": 32, "n_envs": 8}
    m = FairRL(seed=0, steps=1, warmup=1, **tiny).fit(data, model)
    assert math.isnan(m.train_stats_["late_success"])
    # random actions for 40 steps (warm-up only, no update): counted episodes exist and
    # their success share is that of random search, below 1
    m = FairRL(seed=0, steps=40, warmup=40, **tiny).fit(data, model)
    assert m.train_stats_["late_episodes"] > 0
    assert m.train_stats_["late_success"] < 1.0


def test_untrained_skips_training_and_is_checked():
    data = fair_scenario(seed=0, n=200, disparity=1.0, bias=1.0)
    model = data.decision_model()
    x = data.codes[~model.approves(data.codes)][:20]
    tiny = {"batch": 32, "n_envs": 8, "untrained": True}
    a = FairRL(seed=3, steps=5, **tiny).fit(data, model)
    b = FairRL(seed=3, steps=400, **tiny).fit(data, model)  # steps do not matter: no training
    assert a.train_stats_["late_episodes"] == 0
    got_a, got_b = a.get_counterfactuals(x), b.get_counterfactuals(x)
    assert np.array_equal(got_a.counterfactuals, got_b.counterfactuals, equal_nan=True)
    with pytest.raises(MethodError, match="untrained must be true or false"):
        FairRL(untrained="yes")
    with pytest.raises(MethodError, match=r"gamma must be in \(0, 1\]"):
        FairRL(gamma=0.0)
