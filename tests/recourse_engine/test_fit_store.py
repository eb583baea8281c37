"""Pool fits through the strategy table, stored with their format: a stored fit picks as the
fitted one did, and one of another format, or naming a class that is gone, is stale."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from recourse_engine import PoolIndex, carloan_schema, get_strategy, pool_from_frame, synth_pool
from recourse_engine.fit_store import MAGIC, StaleFit, dump_fit, fit_format, load_fit
from recourse_engine.methods import MethodError

SCHEMA = carloan_schema()


def _pool():
    return pool_from_frame(synth_pool(SCHEMA, n=700, seed=11), SCHEMA)


@pytest.fixture(scope="module")
def fits():
    """(pool, {strategy: (fitted, progress calls)}) fitted through the table's PoolFit."""
    pool = _pool()
    out = {}
    for name, params in (("ebr", {}), ("ibr", {"epochs": 3})):
        calls = []
        fitted = get_strategy(name).pool_fit.fit(
            SCHEMA,
            pool,
            progress=lambda done, total, calls=calls: calls.append((done, total)),
            **params,
        )
        out[name] = fitted, calls
    return pool, out


def _picks(pool, strategy):
    index = PoolIndex(SCHEMA, pool)
    out = []
    for i in range(0, 120, 8):
        sel = index.select(pool.codes[i], float(pool.income[i]), f"{strategy}:2", seed=i)
        out.append([p.pool_id for p in sel.picks])
    return out


@pytest.mark.parametrize("strategy", ["ebr", "ibr"])
def test_a_stored_fit_picks_as_the_fitted_one(fits, strategy):
    pool, fitted = fits
    obj, _ = fitted[strategy]
    entry = get_strategy(strategy).pool_fit
    blob = dump_fit(strategy, obj)
    assert blob.startswith(MAGIC + fit_format(strategy).encode() + b"\n")
    entry.attach(pool, obj)
    fresh = _pool()  # another pool object with the same rows
    entry.attach(fresh, load_fit(strategy, blob))
    picks = _picks(pool, strategy)
    assert sum(map(len, picks)) >= 20
    assert _picks(fresh, strategy) == picks


def test_progress_is_reported_but_not_kept(fits):
    _, fitted = fits
    assert fitted["ebr"][1] == [(1, 1)]
    ibr, calls = fitted["ibr"]
    assert calls[-1] == (3, 3) and len(calls) == 3
    # the callback (a local lambda, which pickle refuses) is not part of the fitted model
    assert ibr.method.progress is False
    assert pickle.loads(pickle.dumps(ibr)).method.progress is False


def test_formats_are_per_strategy_and_only_for_fitted_strategies():
    assert fit_format("ebr") == get_strategy("ebr").pool_fit.format
    assert fit_format("ebr") != fit_format("ibr")
    with pytest.raises(MethodError, match="'random' fits nothing on the pool") as err:
        fit_format("random")
    assert not isinstance(err.value, StaleFit)


def _with_header(fmt: str, payload: bytes) -> bytes:
    return MAGIC + fmt.encode() + b"\n" + payload


def test_stale_blobs_are_refused_so_the_caller_refits(fits):
    _, fitted = fits
    density, _ = fitted["ebr"]
    payload = pickle.dumps(density)
    fmt = fit_format("ebr")
    stale = {
        "another format": (_with_header("ebr-pool/1", payload), "is 'ebr-pool/1'"),
        "another strategy's fit": (dump_fit("ibr", fitted["ibr"][0]), "is 'ibr-pool/3'"),
        "a fit stored before EBR's modules became a folder": (
            _with_header("ebr-pool/2", payload),
            "is 'ebr-pool/2'; this engine reads 'ebr-pool/3'",
        ),
        "no header (stored unversioned)": (payload, "no format header"),
        "a module that is gone": (
            _with_header(fmt, b"crecourse_engine.methods.gone\nPoolDensity\n."),
            "does not load",
        ),
        "a class that is gone": (
            _with_header(fmt, b"crecourse_engine.methods.ebr\nNoSuchDensity\n."),
            "does not load",
        ),
        "a truncated payload": (_with_header(fmt, payload[: len(payload) // 2]), "does not load"),
    }
    for what, (blob, message) in stale.items():
        with pytest.raises(StaleFit, match=message) as err:
            load_fit("ebr", blob)
        assert isinstance(err.value, MethodError), what  # callers that catch MethodError
    # the intact blob loads
    again = load_fit("ebr", memoryview(dump_fit("ebr", density)))
    np.testing.assert_array_equal(again.scores, density.scores)
