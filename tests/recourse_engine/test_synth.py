import numpy as np
import pytest

from recourse_engine import carloan_schema, load_schema, pool_from_frame, synth_pool


def test_seeded_any_size_and_valid_for_the_schema():
    a = synth_pool(n=500, seed=11)
    b = synth_pool(n=500, seed=11)
    assert a.equals(b)
    assert not a.equals(synth_pool(n=500, seed=12))
    assert len(synth_pool()) == 3683
    assert a["id"].is_unique
    pool_from_frame(a, carloan_schema())  # every code valid, income numeric
    assert set(a["gender"]) <= {"Female", "Male", "Other"}
    assert a["age"].between(22, 69).all()


def test_dependencies_a_reader_would_recognise():
    f = synth_pool(n=20000, seed=0)
    assert np.corrcoef(f["age"], f["position"])[0, 1] > 0.3
    assert np.corrcoef(f["service_years"], f["position"])[0, 1] > 0.3
    med = f.groupby("position")["income"].median()
    assert med.is_monotonic_increasing
    assert f.groupby("education")["income"].median().is_monotonic_increasing
    assert f.groupby("management_career")["income"].median().iloc[-1] > f["income"].median()
    tokyo = f["residence_prefecture"] == 1
    assert f.loc[tokyo, "income"].median() > f.loc[~tokyo, "income"].median()
    assert (f["teleworking_hours"] <= f["working_hours"]).all()
    managers = f["management_career"] > 1
    assert (f.loc[managers, "position"] >= 4).all()
    assert 0.3 < (f["position"] == 1).mean() < 0.5


def test_refuses_other_schemas_and_bad_sizes():
    other = load_schema({"profile_items": [{"key": "a", "type": "binary", "options": ["n", "y"]}]})
    with pytest.raises(ValueError, match="models the car-loan schema"):
        synth_pool(other, n=5)
    with pytest.raises(ValueError, match="positive integer"):
        synth_pool(n=0)
