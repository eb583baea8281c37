"""The interface's guarantees, exercised through a method whose proposals the test chooses."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

from recourse_engine.constraints import violations
from recourse_engine.decision import IncomeRule
from recourse_engine.encoding import normalise
from recourse_engine.methods import MethodError, RecourseMethod
from recourse_engine.methods.base import NONE_FOUND, NOT_APPROVED, UNCHANGED


@dataclass
class Scripted(RecourseMethod):
    """Proposes given points (normalised scale) — the base class does everything else."""

    proposals: np.ndarray = field(default_factory=lambda: np.empty((0, 0)))
    name: str = field(default="scripted", init=False)

    def _search(self, z, rng):
        return self.proposals.copy()


@dataclass
class ThresholdModel:
    """Approves when the sum of normalised features passes t (independent of the engine)."""

    schema: object
    t: float
    name: str = "threshold"
    schema_hash: str | None = None
    relative_to_factual: bool = False

    def approves(self, codes, income=None, *, factual_income=None):
        return normalise(self.schema, np.atleast_2d(codes)).sum(axis=1) >= self.t

    def predict_proba(self, codes, income=None, *, factual_income=None):
        return self.approves(codes).astype(float)


def _fit(mixed, proposals, t=-np.inf):
    data, _ = mixed
    method = Scripted(proposals=proposals)
    return method.fit(data, ThresholdModel(data.schema, t))


def test_constraints_and_codes_hold_on_every_output(mixed):
    data, _ = mixed
    rng = np.random.default_rng(0)
    x = data.codes[:50]
    z = normalise(data.schema, x)
    wild = rng.uniform(-0.5, 1.5, z.shape)  # anything at all, also off the scale
    res = _fit(mixed, wild).get_counterfactuals(x)
    assert res.valid.any()
    for i in np.flatnonzero(res.valid):
        cf = res.counterfactuals[i]
        assert violations(data.schema, x[i], cf) == []
        for j, it in enumerate(data.schema.items):
            assert it.valid(np.array([cf[j]]))[0], (it.key, cf[j])
        assert not np.array_equal(cf, x[i])


def test_ordinal_proposals_decode_to_the_nearest_code(mixed):
    data, _ = mixed
    x = np.array([[2, 4, 1, 30.0, 1]])
    z = normalise(data.schema, x)
    prop = z.copy()
    prop[0, 0] = (3.4 - 1) / 4  # edu between codes 3 and 4, nearer 3
    res = _fit(mixed, prop).get_counterfactuals(x)
    assert res.valid[0]
    assert res.counterfactuals[0, 0] == 3


def test_forbidden_moves_are_undone_and_reported(mixed):
    data, _ = mixed
    x = np.array([[3, 3, 2, 30.0, 2]])
    z = normalise(data.schema, x)
    prop = z.copy()
    prop[0, 0] = 0.0  # edu may only go up
    prop[0, 1] = 1.0  # debt may only go down
    prop[0, -1] = 0.0  # sex is fixed
    res = _fit(mixed, prop).get_counterfactuals(x)
    assert not res.valid[0]
    assert res.status[0] == UNCHANGED  # every move was forbidden, nothing is left
    assert np.isnan(res.counterfactuals[0]).all()


def test_unapproved_and_missing_rows_are_invalid_never_returned(mixed):
    data, _ = mixed
    x = data.codes[:3]
    z = normalise(data.schema, x)
    prop = z.copy()
    prop[:, 3] = 1.0  # more hours: allowed and changed
    prop[2] = np.nan  # the method found nothing for row 2
    res = _fit(mixed, prop, t=np.inf).get_counterfactuals(x)  # the model approves nothing
    assert not res.valid.any()
    assert list(res.status[:2]) == [NOT_APPROVED, NOT_APPROVED]
    assert res.status[2] == NONE_FOUND
    assert np.isnan(res.counterfactuals).all()


def test_bad_factuals_are_refused_with_row_and_item(mixed):
    data, _ = mixed
    method = _fit(mixed, np.zeros((1, 9)))
    with pytest.raises(MethodError, match="row 0, item 'edu'"):
        method.get_counterfactuals([[9, 1, 1, 1.0, 1]])
    with pytest.raises(MethodError, match="5 item columns"):
        method.get_counterfactuals([[1, 1, 1]])


def test_a_factual_relative_model_is_refused(mixed):
    data, _ = mixed
    with pytest.raises(MethodError, match="does not depend on the factual"):
        Scripted().fit(data, IncomeRule())


def test_unfitted_method_says_so(mixed):
    with pytest.raises(MethodError, match="fit"):
        Scripted().get_counterfactuals(mixed[0].codes[:1])
