"""Shared fixtures: one thread for torch (the machine is shared), small fitted problems."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from recourse_engine.datasets import Dataset, synthetic
from recourse_engine.decision import SklearnModel
from recourse_engine.encoding import normalise
from recourse_engine.schema import load_schema


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread():
    import torch

    torch.set_num_threads(1)


#: short training for tests; the defaults train longer
FAST = {
    "cchvae": {"epochs": 15},
    "ibr": {"epochs": 15},
    "cruds": {"epochs": 15},
    "gs": {},
    "wachter": {},
    "ebr": {"n_samples": 1000},
    "causal": {},
    "fair_rl": {"steps": 400, "warmup": 20},
}


def logistic(data: Dataset) -> SklearnModel:
    est = LogisticRegression(max_iter=2000).fit(normalise(data.schema, data.codes), data.y)
    return SklearnModel(est, data.schema)


@pytest.fixture(scope="session")
def synth():
    data = synthetic(seed=3)
    return data, logistic(data)


MIXED = load_schema(
    {
        "name": "mixed",
        "profile_items": [
            {"key": "edu", "type": "ordinal", "options": list("abcde"), "constraint": "up"},
            {"key": "debt", "type": "ordinal", "options": list("abcde"), "constraint": "down"},
            {"key": "job", "type": "categorical", "options": list("pqr"), "constraint": "any"},
            {"key": "hours", "type": "numeric", "min": 0, "max": 60, "constraint": "any"},
            {"key": "sex", "type": "binary", "options": ["f", "m"], "constraint": "fixed"},
        ],
    }
)


@pytest.fixture(scope="session")
def mixed():
    """Ordinal up/down, categorical, numeric and a fixed group item; the label depends on
    all of them, so recourse has to move within the constraints."""
    rng = np.random.default_rng(7)
    n = 600
    edu = rng.integers(1, 6, n)
    debt = rng.integers(1, 6, n)
    job = rng.integers(1, 4, n)
    hours = rng.uniform(0, 60, n)
    sex = rng.integers(1, 3, n)
    score = 0.8 * edu - 0.8 * debt + 0.5 * (job == 3) + hours / 20 + 0.3 * sex
    y = (score + rng.normal(0, 0.5, n) > np.median(score)).astype(int)
    codes = np.column_stack([edu, debt, job, hours, sex]).astype(float)
    data = Dataset("mixed", MIXED, codes, y, sex - 1, "sex", ("f", "m"))
    return data, logistic(data)
