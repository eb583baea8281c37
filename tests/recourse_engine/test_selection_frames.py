"""`selection_frame` (the body of `Selection.to_frame`): one row per pick, the same values as
the picks, the counterfactual's codes under the schema's keys, the counts in attrs."""

from __future__ import annotations

import pytest

from recourse_engine import PoolIndex, carloan_schema, pool_from_frame, synth_pool
from recourse_engine.selection_frames import COLUMNS, selection_frame


@pytest.fixture(scope="module")
def selection():
    schema = carloan_schema()
    pool = pool_from_frame(synth_pool(schema, n=400, seed=0), schema)
    index = PoolIndex(schema, pool)
    design = "sparsest:1,proximate:1,random:3"
    for x in pool.codes:  # a profile with at least five admissible candidates
        sel = index.select(x, 1_000_000, design, seed=1)
        if not sel.shortfall:
            return schema, sel
    raise AssertionError("no profile of the synthetic pool has five admissible candidates")


def test_one_row_per_pick(selection):
    schema, sel = selection
    frame = selection_frame(sel, schema)
    assert list(frame.columns) == COLUMNS + list(schema.keys)
    assert len(frame) == len(sel.picks) == 5
    for (_, row), pick in zip(frame.iterrows(), sel.picks, strict=True):
        assert row["strategy"] == pick.strategy and row["pool_id"] == pick.pool_id
        assert row["proximity"] == pick.proximity and row["changed"] == ";".join(pick.changed)
        assert row["sparsity_rank"] == pick.sparsity_rank
        assert row[list(schema.keys)].tolist() == pick.codes.tolist()
    assert frame.attrs == {"requested": 5, "n_admissible": sel.n_admissible, "shortfall": 0}


def test_without_a_schema_and_with_a_wrong_one(selection):
    schema, sel = selection
    frame = selection_frame(sel)
    assert list(frame.columns)[-1] == f"code_{len(schema.keys)}"
    from recourse_engine.datasets import synthetic_schema

    with pytest.raises(ValueError, match="items"):
        selection_frame(sel, synthetic_schema())
