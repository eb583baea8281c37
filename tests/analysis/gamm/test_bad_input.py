"""Bad input gets a clear message naming the problem (API), or exit status 2 with one line and
no output file (CLI)."""

from __future__ import annotations

import subprocess

import numpy as np
import pandas as pd
import pytest

from analysis.__main__ import main
from analysis.gamm import GammInputError, fit_gamm
from tests.run_cli import run_analysis


def _data(n_participants: int = 12) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = n_participants * 5
    return pd.DataFrame(
        {
            "uid": np.repeat([f"p{i}" for i in range(n_participants)], 5),
            "x": rng.integers(1, 14, n).astype(float),
            "y": rng.integers(1, 8, n),
        }
    )


@pytest.mark.parametrize(
    "change,match",
    [
        (
            lambda d: d.assign(y=d["y"].astype(float).where(d.index != 3, 2.5)),
            r"whole numbers.*row 4",
        ),
        (lambda d: d.assign(y=d["y"].where(d.index != 7, 8)), r"1\.\.7 scale.*row 8.*8"),
        (lambda d: d.assign(y=d["y"].where(d.index != 0, 0)), r"1\.\.7 scale.*row 1"),
        (
            lambda d: d.assign(y=d["y"].astype(object).where(d.index != 2, "high")),
            r"numeric.*row 3",
        ),
        (lambda d: d.assign(uid="only"), r"single participant"),
        (lambda d: d.assign(x=3.0), r"'x' is constant"),
        (lambda d: d.assign(x=d["x"] % 4), r"4 distinct values.*k = 10"),
        (lambda d: d.drop(columns=["x"]), r"missing column\(s\) x"),
        (lambda d: d.drop(columns=["uid", "y"]), r"missing column\(s\) y, uid"),
        (lambda d: d.assign(x=d["x"].where(d.index != 5, np.nan)), r"'x'.*row 6"),
        (lambda d: d.iloc[0:0], r"no rows"),
    ],
)
def test_api_rejects(change, match):
    with pytest.raises(GammInputError, match=match):
        fit_gamm(change(_data()), "y", "x", "uid")


def test_api_rejects_bad_basis_and_k():
    with pytest.raises(GammInputError, match="basis"):
        fit_gamm(_data(), "y", "x", "uid", basis="ps")
    with pytest.raises(GammInputError, match="k must be"):
        fit_gamm(_data(), "y", "x", "uid", k=2)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return run_analysis(*args, timeout=300)


def test_cli_bad_ratings_exit_2_and_write_nothing(tmp_path):
    d = _data()
    d.loc[4, "y"] = 9
    src = tmp_path / "in.csv"
    d.to_csv(src, index=False)
    out = tmp_path / "out"
    r = _cli(
        "gamm",
        "--input",
        str(src),
        "--outcome",
        "y",
        "--distance",
        "x",
        "--participant",
        "uid",
        "--out",
        str(out),
    )
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "row 5" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    "args,match",
    [
        (["--input", "{missing}"], "no such file"),
        (["--input", "{empty}"], "empty"),
        (["--input", "{good}", "--outcome", "nope"], "missing column"),
        (["--input", "{good}", "--out", "{tmp}/no/such/dir/out"], "does not exist"),
        (["--input", "{good}", "--out", "{tmp}/out.json"], "--out takes a folder"),
        (["--input", "{good}", "--json", "{tmp}/out.json"], "replaced by --out DIR"),
        (["--input", "{good}", "--k", "1"], "--k must be"),
    ],
)
def test_cli_messages(tmp_path, capsys, args, match):
    good = tmp_path / "good.csv"
    _data().to_csv(good, index=False)
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    base = {"--outcome": "y", "--distance": "x", "--participant": "uid"}
    argv = ["gamm"] + [
        a.format(missing=tmp_path / "x.csv", empty=empty, good=good, tmp=tmp_path) for a in args
    ]
    for key, value in base.items():
        if key not in argv:
            argv += [key, value]
    # in-process (same argparse and handlers as `python -m analysis`, without interpreter startup)
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert match in err and err.count("\n") == 1
