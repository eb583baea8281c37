"""Every method: valid outputs only, constraints always, and distance bounds a linear model
makes exact (the closest approved point of a logistic model is |w.x + b| / |w| away)."""

from __future__ import annotations

import numpy as np
import pytest

from recourse_engine.constraints import violations
from recourse_engine.encoding import normalise
from recourse_engine.methods import METHODS, get_method

from .conftest import FAST


def _check_outputs(data, model, res, x):
    assert res.valid.shape == (len(x),)
    assert np.isnan(res.counterfactuals[~res.valid]).all()
    cf = res.counterfactuals[res.valid]
    # the decision model itself, asked again, approves every valid counterfactual
    assert model.approves(cf).all()
    for xi, ci in zip(x[res.valid], cf, strict=True):
        assert violations(data.schema, xi, ci) == []
        assert not np.array_equal(xi, ci)
    for j, it in enumerate(data.schema.items):
        assert it.valid(cf[:, j]).all(), it.key


@pytest.mark.parametrize("name", sorted(METHODS))
def test_synthetic_outputs_are_valid(synth, name):
    data, model = synth
    x = data.codes[~model.approves(data.codes)][::4]
    method = get_method(name, seed=1, **FAST[name]).fit(data, model)
    res = method.get_counterfactuals(x)
    _check_outputs(data, model, res, x)
    assert res.valid.mean() > 0.9, res.status  # the synthetic data has recourse for all
    assert np.array_equal(res.counterfactuals[res.valid][:, 2], x[res.valid][:, 2])  # sex


@pytest.mark.parametrize("name", sorted(METHODS))
def test_constraints_hold_on_mixed_items(mixed, name):
    data, model = mixed
    x = data.codes[~model.approves(data.codes)][:40]
    method = get_method(name, seed=2, **FAST[name]).fit(data, model)
    res = method.get_counterfactuals(x)
    _check_outputs(data, model, res, x)


@pytest.mark.parametrize("name", ["gs", "wachter"])
def test_distance_methods_respect_the_exact_lower_bound(synth, name):
    data, model = synth
    x = data.codes[~model.approves(data.codes)][::5]
    res = get_method(name, seed=0).fit(data, model).get_counterfactuals(x)
    w = model.estimator.coef_[0]
    dmin = -(normalise(data.schema, x) @ w + model.estimator.intercept_[0]) / np.linalg.norm(w[:2])
    cost = np.linalg.norm(res.counterfactuals[:, :2] - x[:, :2], axis=1)
    ok = res.valid
    assert ok.all()
    assert (cost[ok] >= dmin[ok] - 1e-9).all()  # nothing approved lies closer
    if name == "gs":  # the first shell holding approved points is at most one step further
        assert cost.mean() <= dmin.mean() + 0.2


def test_methods_are_reproducible_with_a_seed(synth):
    data, model = synth
    x = data.codes[~model.approves(data.codes)][:20]
    a = get_method("gs", seed=5).fit(data, model).get_counterfactuals(x)
    b = get_method("gs", seed=5).fit(data, model).get_counterfactuals(x)
    assert np.array_equal(a.counterfactuals, b.counterfactuals, equal_nan=True)


def test_causal_recourse_propagates_interventions_through_the_scm(synth):
    """x2 := 0.5 x1 + u and only x1 may be intervened on: every counterfactual moves x2 by
    exactly half of x1's move (abduction-action-prediction, additive noise)."""
    from recourse_engine.methods import AdditiveSCM, CausalRecourse

    data, model = synth
    x = data.codes[~model.approves(data.codes)][::8]
    scm = AdditiveSCM.linear({"x2": {"x1": 0.5}})
    res = CausalRecourse(scm=scm, intervenable=["x1"], seed=0).fit(data, model)
    out = res.get_counterfactuals(x)
    _check_outputs(data, model, out, x)
    ok = out.valid & (out.counterfactuals[:, 1] < 1.0)  # x2 clipped at the scale's edge
    assert ok.sum() > 10
    d1 = out.counterfactuals[ok, 0] - x[ok, 0]
    d2 = out.counterfactuals[ok, 1] - x[ok, 1]
    assert np.allclose(d2, 0.5 * d1)
    assert (d1 > 0).all()


def test_causal_graph_errors(synth):
    from recourse_engine.methods import AdditiveSCM, CausalRecourse, MethodError

    data, model = synth
    cyc = AdditiveSCM.linear({"x1": {"x2": 1.0}, "x2": {"x1": 1.0}})
    with pytest.raises(MethodError, match="cycle"):
        CausalRecourse(scm=cyc).fit(data, model)
    with pytest.raises(MethodError, match="fixed"):
        CausalRecourse(intervenable=["sex"]).fit(data, model)
