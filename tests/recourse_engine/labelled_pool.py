"""A synthetic car-loan pool with an `approved` label, for the tests that train models."""

from __future__ import annotations

from recourse_engine import carloan_schema, pool_from_frame, synth_pool
from recourse_engine.pool import Pool
from recourse_engine.schema import FeatureSchema


def labelled_carloan_pool(n: int, seed: int) -> tuple[FeatureSchema, Pool]:
    """The car-loan schema and `n` synthetic profiles labelled by a rule a linear model can
    learn: senior position or graduate education."""
    schema = carloan_schema()
    frame = synth_pool(schema, n=n, seed=seed)
    frame["approved"] = ((frame["position"] >= 4) | (frame["education"] >= 4)).astype(int)
    return schema, pool_from_frame(frame, schema)
