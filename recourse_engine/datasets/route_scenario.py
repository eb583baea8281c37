"""A fair-recourse scenario with two routes to approval, one of which works for one group
only: a scenario where a fairness reward *could* help, because a fair recourse costs no
more than an unfair one.

People: `route_a` and `route_b` (numeric 0..100, up: two programmes that nobody has
taken yet, so both start at 0 for everyone), `history` (fixed, 40..100, the same
distribution in both groups), `age` and `region` (fixed, not in the score: attributes for
the subgroup audit) and `community` (the protected attribute, fixed, binary: minority,
majority; majority with probability 0.6). The decision model's score is

    s = 2 a' + 2 b' [community = majority] + 3 h' − 2

(primes: the item on [0, 1]), approval when s >= 0 (logit 4 s). So route A counts for
everyone and route B counts for the majority only: group-dependent effectiveness. Before
any recourse the score does not depend on the community (b' = 0 for all), so both groups
are rejected at the same rate with the same gaps g = (2 − 3 h') / 2 <= 0.4, and a
person's twin of the other community starts at the same score.

By construction:

* for a majority member, raising route A by g and raising route B by g cost the same in
  Gower (L1) distance, the fair_rl reward's cost, and in L2 on the normalised scale; so do
  all mixtures with total g (in Gower). A recourse that uses route A only is approved for
  both communities; any part of it spent on route B does nothing for the minority;
* a method that minimises L2 distance (Growing Spheres) or follows the gradient with an L1
  penalty under Adam (Wachter: equal gradients on both routes, equal steps) moves a
  majority member by about (g/2, g/2) and a minority member by (g, 0). Three criteria
  fail for them by construction: equal cost across groups (the majority's L2 cost is
  g/√2, the minority's g: `cost_gap` > 0), equal effectiveness of an action across
  groups (a majority member's action raises a minority member's score by half as much as
  a majority member's: lower effectiveness for the minority, `equal_choice` gap), and
  twin consistency (a majority member's action gets their minority twin approved only
  where its route-A part alone covers the gap, i.e. where it overshoots two-fold:
  `twin_action_mismatch`).

A policy that gives everyone route A has none of these gaps at no extra Gower cost; that
is what the equal-effectiveness and ECR reward terms should find, and what the no-fairness
reward has no reason to prefer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..decision import SklearnModel
from ..schema import FeatureSchema, load_schema
from .base import Dataset, DatasetError

#: the score's weights on the normalised scale, and the logit's scale
ROUTE_WEIGHT = 2.0
HISTORY_WEIGHT = 3.0
THRESHOLD = 2.0
SCALE = 4.0
MAJORITY_SHARE = 0.6
NAME = "fair_scenario_routes"


def route_schema() -> FeatureSchema:
    def numeric(key: str, lo: float, hi: float, constraint: str) -> dict:
        return {"key": key, "type": "numeric", "min": lo, "max": hi, "constraint": constraint}

    return load_schema(
        {
            "name": NAME,
            "profile_items": [
                numeric("route_a", 0.0, 100.0, "up"),
                numeric("route_b", 0.0, 100.0, "up"),
                numeric("history", 0.0, 100.0, "fixed"),
                numeric("age", 18.0, 70.0, "fixed"),
                {
                    "key": "region",
                    "type": "binary",
                    "options": ["rural", "urban"],
                    "constraint": "fixed",
                },
                {
                    "key": "community",
                    "type": "binary",
                    "options": ["minority", "majority"],
                    "constraint": "fixed",
                },
            ],
        }
    )


def route_model(schema: FeatureSchema) -> SklearnModel:
    """The score as a scikit-learn MLPClassifier with weights set by hand (so the gradient
    methods can use it). Its ReLU layer is exact on the items' ranges and active where
    everyone starts (a ReLU at its kink has no gradient, and Wachter would not move):
    relu(a' + 1) − 1 = a', relu(b' + 1.5 m − 1) − 0.5 relu(m) = b'·m (b' in [0, 1],
    m in {0, 1}), relu(h') = h'; the output is 4 times the score."""
    from sklearn.neural_network import MLPClassifier

    keys = [it.key for it in schema.items]
    a, b, h, m = (keys.index(k) for k in ("route_a", "route_b", "history", "community"))
    w1 = np.zeros((len(keys), 4))
    w1[a, 0] = 1.0
    w1[b, 1], w1[m, 1] = 1.0, 1.5
    w1[h, 2] = 1.0
    w1[m, 3] = 1.0
    b1 = np.array([1.0, -1.0, 0.0, 0.0])
    w = ROUTE_WEIGHT
    w2 = SCALE * np.array([[w], [w], [HISTORY_WEIGHT], [-0.5 * w]])
    b2 = np.array([-SCALE * (THRESHOLD + w)])
    est = MLPClassifier(hidden_layer_sizes=(4,), activation="relu")
    est.coefs_, est.intercepts_ = [w1, w2], [b1, b2]
    est.n_layers_, est.n_outputs_, est.out_activation_ = 3, 1, "logistic"
    est.classes_ = np.array([0, 1])
    est.n_features_in_ = len(keys)
    return SklearnModel(est, schema, name="route_scenario_mlp")


@dataclass
class RouteDataset(Dataset):
    """The routes scenario's rows; it brings its own decision model."""

    def decision_model(self, seed: int = 0) -> SklearnModel:
        return route_model(self.schema)

    def subsample(self, n: int, seed: int) -> Dataset:
        return self


def route_scenario(seed: int = 0, n: int = 2000) -> RouteDataset:
    """Draw n people (see the module docstring); the outcome y is the score plus noise."""
    if not isinstance(n, int) or n < 20:
        raise DatasetError(f"{NAME}: n must be an integer >= 20, got {n!r}")
    rng = np.random.default_rng(seed)
    majority = (rng.random(n) < MAJORITY_SHARE).astype(int)
    region = rng.integers(0, 2, n)
    history = rng.uniform(40.0, 100.0, n)
    age = np.round(np.clip(40 + 12 * rng.standard_normal(n), 18, 70))
    zeros = np.zeros(n)
    codes = np.column_stack([zeros, zeros, history, age, region + 1, majority + 1])
    score = HISTORY_WEIGHT * history / 100.0 - THRESHOLD
    y = (score + 0.3 * rng.standard_normal(n) > 0).astype(int)
    return RouteDataset(
        name=NAME,
        schema=route_schema(),
        codes=codes.astype(float),
        y=y,
        group=majority,
        sensitive="community",
        group_labels=("minority", "majority"),
    )
