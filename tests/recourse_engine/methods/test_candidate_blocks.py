"""The searches judge their candidates block by block (`base.CANDIDATE_BLOCK`); the
counterfactuals are those of judging every candidate in one pass (up to the last bit of
the VAE decoders' float32 products, which a matrix kernel may round differently for
another number of rows)."""

from __future__ import annotations

import numpy as np
import pytest

from recourse_engine.encoding import normalise
from recourse_engine.methods import base, get_method
from recourse_engine.methods.base import judged_candidates, snap

from .conftest import FAST


def test_judged_candidates_equal_one_direct_pass(synth, monkeypatch):
    data, model = synth
    method = get_method("gs", seed=1).fit(data, model)
    zf = normalise(data.schema, data.codes[:9])
    rng = np.random.default_rng(4)
    raw = np.repeat(zf[:, None, :], 11, axis=1) + rng.normal(0, 0.5, (9, 11, zf.shape[1]))
    flat = raw.reshape(-1, zf.shape[1])
    monkeypatch.setattr(base, "CANDIDATE_BLOCK", 7)  # blocks that split factuals' samples
    seen: list[slice] = []
    cand, ok = judged_candidates(method, zf, lambda rows: seen.append(rows) or flat[rows], 11)
    # 99 rows in blocks of 7 (the last of 1), in order, covering every row once
    assert len(seen) == 15 and seen[0].start == 0 and seen[-1].stop == 99
    assert all(a.stop == b.start for a, b in zip(seen, seen[1:], strict=False))
    assert [r.stop - r.start for r in seen] == [7] * 14 + [1]
    direct = snap(method.layout, zf[:, None, :], raw)
    assert np.array_equal(cand, direct)
    assert np.array_equal(ok, method.approves_z(direct.reshape(-1, zf.shape[1])).reshape(9, 11))


@pytest.mark.parametrize("name", ["gs", "cchvae", "ibr"])
def test_counterfactuals_do_not_depend_on_the_block_size(synth, monkeypatch, name):
    data, model = synth
    x = data.codes[~model.approves(data.codes)][::6]
    got = []
    for block in (256, 1 << 30):  # blocks of 256 rows, against one pass
        monkeypatch.setattr(base, "CANDIDATE_BLOCK", block)
        method = get_method(name, seed=2, **FAST[name]).fit(data, model)
        got.append(method.get_counterfactuals(x).counterfactuals)
    # the same factuals found; values equal up to the float32 decoders' last bit
    assert np.array_equal(np.isnan(got[0]), np.isnan(got[1]))
    np.testing.assert_allclose(got[0], got[1], rtol=1e-6, atol=0)
    assert not np.isnan(got[0]).all()
