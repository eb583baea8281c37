"""Work shared between the gao2023 setting and its replicated-defects twin: the same rows
with and without the memo, and no value taken across different inputs."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.experiment.memo import RunMemo, digest
from analysis.experiment.run import run_once
from analysis.experiment.settings import preset
from recourse_engine.datasets import synthetic

TIMING = {"fit_seconds", "cf_per_second", "wall_seconds"}
METHODS = ["ebr", "gs"]


#: torch on one thread (tests/conftest.py): the cores are shared
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _numbers(rows: list[dict]) -> list[tuple]:
    return [
        (r["method"], r["metric"], r["value"], r["before"], r["diff"])
        for r in rows
        if r["metric"] not in TIMING
    ]


def test_the_defects_twin_gives_the_same_rows_with_the_memo_and_takes_its_work():
    data = synthetic(seed=3)
    gao = preset("gao2023")
    twin = gao.with_(replicate_defects=True)
    direct = [run_once(data, METHODS, 3, settings=s)[0] for s in (gao, twin)]
    memo = RunMemo()
    first, _ = run_once(data, METHODS, 3, settings=gao, memo=memo)
    assert memo.hits == 0
    second, out = run_once(data, METHODS, 3, settings=twin, memo=memo)
    # the model, both methods, and the original's K-Means and ε come from the memo
    assert memo.hits == 5
    assert _numbers(first) == _numbers(direct[0])
    assert _numbers(second) == _numbers(direct[1])
    # the defects change the counted centralization, so the twin is not a copy
    assert _numbers(second) != _numbers(first)
    assert set(out["factuals"]) == set(METHODS)


def test_other_seeds_and_settings_take_nothing_from_the_memo():
    memo = RunMemo()
    run_once(synthetic(seed=3), METHODS, 3, settings=preset("gao2023"), memo=memo)
    run_once(synthetic(seed=4), METHODS, 4, settings=preset("gao2023"), memo=memo)
    run_once(synthetic(seed=3), METHODS, 3, settings=preset("sound"), memo=memo)
    assert memo.hits == 0


def test_digest_tells_arrays_apart_by_values_dtype_and_shape():
    a = np.arange(6.0)
    assert digest(a) == digest(a.copy())
    assert digest(a) != digest(a + 1e-12)
    assert digest(a) != digest(a.astype(np.float32))
    assert digest(a) != digest(a.reshape(2, 3))
    assert digest(a, a) != digest(a)
