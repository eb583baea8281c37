import json

import numpy as np
import pytest

from recourse_engine import SchemaError, carloan_schema, load_schema, normalise
from recourse_engine.encoding import denormalise


def _schema(**override):
    item = {
        "key": "a",
        "label": "A",
        "type": "ordinal",
        "options": ["x", "y", "z"],
        "constraint": "up",
    }
    item.update(override)
    return {"name": "t", "profile_items": [item]}


def test_carloan_schema_has_sixteen_items_with_paper_constraints():
    s = carloan_schema()
    assert s.d == 16
    assert s.item("education").constraint == "up"
    assert s.item("working_hours").constraint == "any"
    assert s.item("position").span == 9
    assert "screening" in s.extra


@pytest.mark.parametrize(
    ("override", "needle"),
    [
        ({"type": "fancy"}, "unknown type 'fancy'"),
        ({"options": []}, "empty or missing 'options'"),
        ({"constraint": "sideways"}, "bad constraint 'sideways'"),
        ({"type": "binary"}, "binary items need exactly 2 options"),
        ({"type": "categorical", "constraint": "up"}, "needs an order"),
        ({"type": "numeric", "options": None, "min": 5, "max": 1}, "min < max"),
    ],
)
def test_invalid_items_name_the_item_and_problem(override, needle):
    with pytest.raises(SchemaError) as err:
        load_schema(_schema(**override))
    assert "'a'" in str(err.value)
    assert needle in str(err.value)


def test_duplicate_keys_are_rejected():
    data = _schema()
    data["profile_items"].append(dict(data["profile_items"][0]))
    with pytest.raises(SchemaError, match="item 'a': duplicate key"):
        load_schema(data)


def test_load_from_file_and_bad_json(tmp_path):
    p = tmp_path / "s.json"
    p.write_text(json.dumps(_schema()))
    assert load_schema(p).keys == ["a"]
    p.write_text("{not json")
    with pytest.raises(SchemaError, match="not valid JSON"):
        load_schema(p)


def test_hash_changes_with_constraint_and_not_with_label():
    base = load_schema(_schema()).hash()
    assert load_schema(_schema(label="other")).hash() == base
    assert load_schema(_schema(constraint="any")).hash() != base


def test_normalised_scale_costs_one_per_category_change_and_round_trips():
    s = carloan_schema()
    rng = np.random.default_rng(0)
    codes = np.column_stack([rng.integers(1, it.n_options + 1, size=50) for it in s.items])
    z = normalise(s, codes)
    assert np.all((z >= 0) & (z <= 1))
    assert np.array_equal(denormalise(s, z), codes)
    a, b = codes[0].copy(), codes[0].copy()
    j = s.index("residence_prefecture")
    b[j] = 3 - a[j]
    za, zb = normalise(s, np.vstack([a, b]))
    assert np.isclose(np.linalg.norm(za - zb), 1.0)
