"""Input that would make a fit as large as the data, or larger than memory allows: refused up
front with one line naming the problem (and the memory figure), before anything large is
built; the estimate itself stays above what a fit measurably allocates."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd
import pytest

from analysis.__main__ import main
from analysis.gamm import GammInputError, fit_gamm
from analysis.gamm.memory import (
    ENV_VAR,
    GammMemoryError,
    estimate_fit_bytes,
    memory_limit,
    parse_size,
)


def _data(n_participants: int = 30, per: int = 5, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = n_participants * per
    uid = np.repeat([f"p{i}" for i in range(n_participants)], per)
    x = rng.uniform(0, 4, n).round(2)
    b0 = np.repeat(rng.normal(0, 1, n_participants), per)
    y = np.clip(np.round(4 - 0.8 * np.minimum(x, 1.5) + b0 + rng.normal(0, 1, n)), 1, 7)
    return pd.DataFrame({"uid": uid, "x": x, "y": y.astype(int), "row": np.arange(n).astype(str)})


@pytest.mark.parametrize(
    "formula",
    [
        "y ~ s(x) + s(row, bs = 're')",
        "y ~ s(x) + s(uid, bs = 're') + s(row, bs = 're')",
        "y ~ s(x) + s(row, x, bs = 're')",
    ],
)
def test_one_level_per_row_is_refused(formula):
    with pytest.raises(GammInputError, match=r"s\(row(,x)?\).*'row'.*every row \(150 levels"):
        fit_gamm(formula, _data())


def test_one_level_per_row_refused_before_the_design_is_built(monkeypatch):
    """The dense block of `s(uid) + s(row)` would be rows x participants: never allocated."""
    import analysis.gamm.fit as fit_module

    def fail(*args, **kwargs):
        raise AssertionError("build_design reached")

    monkeypatch.setattr(fit_module, "build_design", fail)
    with pytest.raises(GammInputError, match="every row"):
        fit_gamm("y ~ s(x) + s(uid, bs = 're') + s(row, bs = 're')", _data())


def test_seed_model_with_one_participant_per_row_is_refused():
    d = _data()
    with pytest.raises(GammInputError, match="'row' has a different value in every row"):
        fit_gamm(d, "y", "x", "row")


@pytest.mark.parametrize(
    "text,size",
    [
        ("6GB", 6 * 1024**3),
        ("1.5G", int(1.5 * 1024**3)),
        ("800MB", 800 * 1024**2),
        ("800m", 800 * 1024**2),
        ("512KiB", 512 * 1024),
        ("1000", 1000),
        (2048, 2048),
    ],
)
def test_parse_size(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "6 parsecs", "-1GB", "0", "GB", 0])
def test_parse_size_rejects(text):
    with pytest.raises(GammInputError, match="memory limit"):
        parse_size(text)


def test_limit_from_argument_environment_or_machine(monkeypatch):
    monkeypatch.setenv(ENV_VAR, "3G")
    assert memory_limit("1G") == (1024**3, "memory_limit / --memory-limit")
    assert memory_limit() == (3 * 1024**3, ENV_VAR)
    monkeypatch.delenv(ENV_VAR)
    limit, source = memory_limit()
    assert "physical memory" in source and limit > 0


def test_fit_over_the_limit_is_refused_with_the_figure(monkeypatch):
    import analysis.gamm.fit as fit_module

    monkeypatch.setattr(fit_module, "build_design", lambda *a, **k: pytest.fail("fit ran"))
    with pytest.raises(GammMemoryError, match=r"about \d+\.\d MB .*limit of 1\.0 MB"):
        fit_gamm(_data(), "y", "x", "uid", memory_limit="1MB")
    monkeypatch.setenv(ENV_VAR, "1MB")
    with pytest.raises(GammMemoryError, match=ENV_VAR):
        fit_gamm(_data(), "y", "x", "uid")


def test_a_second_large_grouping_factor_is_refused_not_allocated():
    """Participants blocked, 4,000 items dense: p x p matrices of 4,000+ columns and a model
    matrix of rows x items; the estimate says so before building any of it."""
    rng = np.random.default_rng(1)
    d = _data(n_participants=5000, per=2)
    d["item"] = rng.integers(0, 4000, len(d)).astype(str)
    with pytest.raises(GammMemoryError, match="GB of memory"):
        fit_gamm("y ~ s(x) + s(uid, bs = 're') + s(item, bs = 're')", d, memory_limit="1GB")


@pytest.mark.parametrize(
    "formula,n_participants",
    [
        ("y ~ s(x) + s(uid, bs = 're') + s(uid, x, bs = 're')", 300),
        ("y ~ s(x) + s(uid, bs = 're') + s(uid, x, bs = 're')", 3000),
        ("y ~ s(x) + s(uid, bs = 're') + s(item, bs = 're')", 400),
    ],
)
def test_estimate_covers_measured_peak(formula, n_participants):
    """tracemalloc sees numpy's buffers: the estimate must not be below the measured peak."""
    d = _data(n_participants=n_participants)
    d["item"] = np.random.default_rng(2).integers(0, 60, len(d)).astype(str)
    tracemalloc.start()
    try:
        fit = fit_gamm(formula, d)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    des = fit.design
    dense = any(t.kind == "random" and t.random_index is None for t in des.terms)
    est = estimate_fit_bytes(
        des.n, des.p_fixed, des.n_groups, des.n_random_terms, des.n_lambda, dense
    )
    assert est >= peak, (est, peak)


def test_cli_memory_limit(tmp_path, capsys):
    src = tmp_path / "in.csv"
    _data().to_csv(src, index=False)
    base = ["gamm", "--input", str(src), "--outcome", "y", "--distance", "x"]
    code = main([*base, "--participant", "uid", "--memory-limit", "1MB"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "of memory (estimate), more than the limit of 1.0 MB" in err
    code = main([*base, "--participant", "uid", "--memory-limit", "lots"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: --memory-limit:") and err.count("\n") == 1
    code = main([*base, "--participant", "row"])
    err = capsys.readouterr().err
    assert code == 2 and "every row" in err and err.count("\n") == 1
