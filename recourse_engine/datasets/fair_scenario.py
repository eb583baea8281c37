"""A synthetic fair-recourse scenario with a known, tunable disparity and a decision model
that can be made deliberately biased.

No package in this project's package lists ships the Chicago Strategic Subject List or the
Alzheimer data of "Fair Recourse for All" (the Alzheimer-named packages are MRI and
single-cell tools), so this scenario stands in for them, with what real data cannot give:
a known fair solution and a bias one can turn up.

People: `sex` (the protected attribute, fixed, binary) and `region` (fixed, binary: a
second protected attribute for intersectional groups), `age` (fixed), and four actionable
items of every kind the environment handles: `earnings` (numeric, any; `income` is a reserved key), `savings` (numeric,
up), `education` (ordinal 1..5, up) and `job` (categorical: manual, clerical,
professional; any). Group 0 (female) draws earnings, savings and education lower by
`disparity` standard units (0: no disparity). The true score is

    s = 2.5 earnings' + 1.5 savings' + 1.2 education' + 0.8 [job = professional] − 2.6,

(primes: the item on [0, 1]); y = 1 when s + noise > 0. The decision model is the logistic
model of that score, with `bias` added to the logit of group 1 and taken from group 0 (0:
the fair Bayes rule). Every rejected person can be approved by raising earnings and savings
within their ranges (the score's maximum, 2.5 + 1.5 + 1.2 + 0.8 − 2.6 − bias > 0 for
bias < 3.4), so a success rate of 1 in both groups — a proportion difference of 0 — is
attainable: the known fair solution.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..decision import SklearnModel
from ..encoding import normalise
from ..schema import FeatureSchema, load_schema
from .base import Dataset, DatasetError

WEIGHTS = {"earnings": 2.5, "savings": 1.5, "education": 1.2}
PROFESSIONAL = 0.8
INTERCEPT = -2.6


def scenario_schema() -> FeatureSchema:
    return load_schema(
        {
            "name": "fair_scenario",
            "profile_items": [
                {
                    "key": "earnings",
                    "type": "numeric",
                    "min": 0.0,
                    "max": 100.0,
                    "constraint": "any",
                },
                {"key": "savings", "type": "numeric", "min": 0.0, "max": 50.0, "constraint": "up"},
                {
                    "key": "education",
                    "type": "ordinal",
                    "options": ["none", "school", "vocational", "bachelor", "master"],
                    "constraint": "up",
                },
                {
                    "key": "job",
                    "type": "categorical",
                    "options": ["manual", "clerical", "professional"],
                    "constraint": "any",
                },
                {"key": "age", "type": "numeric", "min": 18.0, "max": 70.0, "constraint": "fixed"},
                {
                    "key": "region",
                    "type": "binary",
                    "options": ["rural", "urban"],
                    "constraint": "fixed",
                },
                {
                    "key": "sex",
                    "type": "binary",
                    "options": ["female", "male"],
                    "constraint": "fixed",
                },
            ],
        }
    )


@dataclass
class ScenarioDataset(Dataset):
    """The scenario's rows and the bias of its decision model."""

    bias: float = 0.0

    def decision_model(self, seed: int = 0) -> SklearnModel:
        """The logistic model of the true score, `bias` in favour of group 1 (male)."""
        return scenario_model(self.schema, self.bias)

    def subsample(self, n: int, seed: int) -> Dataset:
        return self


def scenario_model(schema: FeatureSchema, bias: float = 0.0) -> SklearnModel:
    """A scikit-learn LogisticRegression with the scenario's coefficients set by hand (so
    gradient methods can use it too); the logit is scaled by 4 to make it sharp."""
    from sklearn.linear_model import LogisticRegression

    cols = normalise(schema, np.array([[it.min_value for it in schema.items]])).shape[1]
    coef = np.zeros(cols)
    # normalised columns: earnings, savings, education, job (3 one-hot), age, region, sex
    coef[0], coef[1], coef[2] = WEIGHTS["earnings"], WEIGHTS["savings"], WEIGHTS["education"]
    coef[5] = PROFESSIONAL * np.sqrt(2.0)  # the one-hot column is scaled by 1/sqrt(2)
    coef[-1] = 2.0 * bias  # sex: 0 for female, 1 for male
    est = LogisticRegression()
    scale = 4.0
    est.coef_ = scale * coef[None, :]
    est.intercept_ = np.array([scale * (INTERCEPT - bias)])
    est.classes_ = np.array([0, 1])
    est.n_features_in_ = cols
    name = "scenario_logistic" if bias == 0 else f"scenario_logistic_bias{bias:g}"
    return SklearnModel(est, schema, name=name)


def fair_scenario(
    seed: int = 0, n: int = 2000, disparity: float = 1.0, bias: float = 0.0
) -> ScenarioDataset:
    """Draw the scenario: n people, group 0 lower by `disparity` sd in income, savings and
    education; `bias` (logit units) is the decision model's favour for group 1."""
    if not isinstance(n, int) or n < 20:
        raise DatasetError(f"fair_scenario: n must be an integer >= 20, got {n!r}")
    if not (np.isfinite(disparity) and disparity >= 0):
        raise DatasetError(f"fair_scenario: disparity must be >= 0, got {disparity!r}")
    if not (np.isfinite(bias) and 0 <= bias < 3.4):
        raise DatasetError(f"fair_scenario: bias must be in [0, 3.4), got {bias!r}")
    rng = np.random.default_rng(seed)
    sex = rng.integers(0, 2, n)
    region = rng.integers(0, 2, n)
    shift = disparity * (1 - sex)  # group 0 (female) is lower
    ability = rng.standard_normal(n)
    income = np.clip(
        50 + 15 * (ability - 0.6 * shift) + 8 * region + 5 * rng.standard_normal(n), 0, 100
    )
    savings = np.clip(20 + 8 * (ability - 0.6 * shift) + 5 * rng.standard_normal(n), 0, 50)
    edu = np.clip(np.round(3 + ability - 0.6 * shift + 0.7 * rng.standard_normal(n)), 1, 5)
    job = rng.choice([1, 2, 3], size=n, p=[0.4, 0.35, 0.25])
    age = np.round(np.clip(40 + 12 * rng.standard_normal(n), 18, 70))
    codes = np.column_stack([income, savings, edu, job, age, region + 1, sex + 1]).astype(float)
    z = np.column_stack([income / 100, savings / 50, (edu - 1) / 4])
    score = z @ np.array(list(WEIGHTS.values())) + PROFESSIONAL * (job == 3) + INTERCEPT
    y = (score + 0.3 * rng.standard_normal(n) > 0).astype(int)
    return ScenarioDataset(
        name="fair_scenario" if bias == 0 else "fair_scenario_biased",
        schema=scenario_schema(),
        codes=codes,
        y=y,
        group=sex.astype(int),
        sensitive="sex",
        group_labels=("female", "male"),
        bias=float(bias),
    )
