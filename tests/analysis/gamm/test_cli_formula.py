"""`python -m analysis gamm --formula ...`: mgcv's summary as JSON, equal to the mgcv fixture;
bad formulas exit 2 with one line naming the term and write nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analysis.__main__ import main
from tests.run_cli import run_analysis

FIX = Path(__file__).parent / "fixtures"
DATA = str(FIX / "study_methods.csv")


def test_formula_cli_writes_mgcv_numbers(tmp_path):
    ref = json.loads((FIX / "comparison_by.json").read_text())
    out = tmp_path / "out"
    formula = ref["formula"].replace('"', "'")  # either kind of quotes
    r = run_analysis("gamm", "--input", DATA, "--formula", formula, "--out", str(out))
    assert r.returncode == 0, r.stderr
    got = json.loads((out / "gamm.json").read_text())
    for key in ("parametric", "smooth", "aic", "reml", "scale", "r_sq", "dev_expl", "n"):
        assert key in got
    assert got["n"] == ref["n"]
    assert abs(got["aic"] - ref["aic"]) / ref["aic"] < 0.002
    for term, row in ref["parametric"].items():
        assert abs(got["parametric"][term]["estimate"] - row["estimate"]) < 0.01 * abs(
            row["estimate"]
        )
        assert set(got["parametric"][term]) == {"estimate", "se", "t", "p"}
    for term, row in ref["smooth"].items():
        assert set(got["smooth"][term]) == {"edf", "ref_df", "F", "p"}
        assert abs(got["smooth"][term]["F"] - row["F"]) < 0.03 * row["F"]


def test_ml_method_flag(tmp_path, capsys):
    ref = json.loads((FIX / "comparison_ml0.json").read_text())
    out = tmp_path / "ml"
    code = main(
        ["gamm", "--input", DATA, "--formula", ref["formula"], "--method", "ML", "--out", str(out)]
    )
    assert code == 0, capsys.readouterr().err
    got = json.loads((out / "gamm.json").read_text())
    assert got["method"] == "ML" and abs(got["reml"] - ref["reml"]) < 1e-3


@pytest.mark.parametrize(
    "formula, needle",
    [
        ("action ~ strategy + te(proximity, age)", "'te(proximity, age)'"),
        ("action ~ nosuch + s(proximity)", "'nosuch'"),
        ("action ~ s(proximity, by = nosuch)", "'s(proximity, by = nosuch)'"),
        ("action ~ strategy*condition", "'strategy*condition'"),
    ],
)
def test_bad_formula_exits_2_names_term_writes_nothing(tmp_path, capsys, formula, needle):
    out = tmp_path / "out"
    code = main(["gamm", "--input", DATA, "--formula", formula, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert needle in err and err.count("\n") == 1
    assert not out.exists()


def test_formula_and_seed_flags_exclude_each_other(capsys):
    code = main(["gamm", "--input", DATA, "--formula", "action ~ 1", "--outcome", "action"])
    assert code == 2 and "--formula replaces" in capsys.readouterr().err
    code = main(["gamm", "--input", DATA, "--outcome", "action"])
    assert code == 2 and "give --formula" in capsys.readouterr().err
