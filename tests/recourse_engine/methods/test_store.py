"""A saved fitted method gives the same counterfactuals after loading; wrong files refused."""

from __future__ import annotations

import numpy as np
import pytest

from recourse_engine import carloan_schema
from recourse_engine.methods import MethodError, get_method, load_method, save_method


@pytest.mark.parametrize("name", ["ebr", "ibr"])
def test_round_trip_reproduces_counterfactuals(synth, tmp_path, name):
    data, model = synth
    x = data.codes[~model.approves(data.codes)][:25]
    params = {"epochs": 5} if name == "ibr" else {"n_samples": 500}
    method = get_method(name, seed=4, **params).fit(data, model)
    before = method.get_counterfactuals(x)
    path = save_method(method, tmp_path / "m.joblib")
    after = load_method(path, data.schema).get_counterfactuals(x)
    assert np.array_equal(before.counterfactuals, after.counterfactuals, equal_nan=True)
    assert np.array_equal(before.valid, after.valid)


def test_refusals(synth, tmp_path):
    data, model = synth
    with pytest.raises(MethodError, match="fitted"):
        save_method(get_method("gs"), tmp_path / "x")
    path = save_method(get_method("gs").fit(data, model), tmp_path / "gs.joblib")
    with pytest.raises(MethodError, match="not on this schema"):
        load_method(path, carloan_schema())
    (tmp_path / "junk").write_text("not a pickle")
    with pytest.raises(MethodError, match="not a saved recourse method"):
        load_method(tmp_path / "junk", data.schema)
    with pytest.raises(MethodError, match="not found"):
        load_method(tmp_path / "missing", data.schema)
