"""The `ibr` design strategy: admissible pool members nearest in IBR's latent space."""

from __future__ import annotations

import numpy as np
import pytest

from recourse_engine import carloan_schema, parse_design, pool_from_frame, synth_pool
from recourse_engine.methods import MethodError, attach_pool_ibr, fit_pool_ibr
from recourse_engine.selection import PoolIndex


@pytest.fixture(scope="module")
def fitted():
    schema = carloan_schema()
    pool = pool_from_frame(synth_pool(schema, n=800, seed=9), schema)
    latent = fit_pool_ibr(schema, pool, seed=0, epochs=3)
    attach_pool_ibr(pool, latent)
    return schema, pool, latent


def test_picks_the_latent_nearest_admissible_member(fitted):
    schema, pool, latent = fitted
    index = PoolIndex(schema, pool)
    design = parse_design("ibr:2")
    # an independent encoding of every pool row: the encoder applied row by row
    enc = np.vstack([latent.encode(pool.codes[r]) for r in range(len(pool))])
    assert np.allclose(enc, latent.latent, atol=1e-5)
    checked = 0
    for i in range(0, 40, 4):
        x, inc = pool.codes[i], float(pool.income[i])
        sel = index.select(x, inc, design, seed=i)
        cand = index.candidates(x, inc)
        if len(cand) < 3:
            continue
        zf = latent.encode(x)[0]
        d = np.linalg.norm(enc[cand.rows] - zf, axis=1)
        first = sel.picks[0]
        assert first.strategy == "ibr"
        assert np.linalg.norm(enc[first.pool_index] - zf) == pytest.approx(d.min(), abs=1e-5)
        assert len(sel.picks) == 2
        assert not np.array_equal(sel.picks[0].codes, sel.picks[1].codes)
        checked += 1
    assert checked >= 5


def test_pool_ibr_needs_groups(fitted):
    schema, pool, _ = fitted
    with pytest.raises(MethodError, match="no group column 'race'"):
        fit_pool_ibr(schema, pool, group_column="race")
    with pytest.raises(MethodError, match="one group value per pool row"):
        fit_pool_ibr(schema, pool, group=np.zeros(3))
