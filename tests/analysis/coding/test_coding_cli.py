"""`python -m analysis coding`: agreement files equal the library's figures, exemplar quotes
chosen by code and rating band with their strategy, distances and rating, suggested groups
labelled as suggestions; bad input refused with one line and nothing written."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from analysis.coding import Codebook, agreement
from tests.run_cli import run_analysis

HERE = Path(__file__).parent
ANSWERS = [
    ("too expensive to change jobs", "it would cost too much"),
    ("I cannot afford a degree | now", "money"),
    ("too much effort for me", "takes years of effort"),
    ("", "effort, again"),
    ("fine, easy", "easy enough"),
]


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("coding") / "export"
    folder.mkdir()
    ev = pd.DataFrame(
        {
            "participant": ["p1", "p1", "p2", "p2", "p3"],
            "recourse": [11, 12, 21, 22, 31],
            "strategy": ["sparsest", "wachter", "proximate", "random", "gs"],
            "sparsity": [1, 3, 2, 5, 1],
            "proximity": [0.25, 1.5, 0.5, 3.0, 0.2],
            "any_impossible": [0, 0, 1, 0, 0],
            "acceptance": [2, 1, 3, 5, 7],
            "action": [1, 2, 2, 4, 6],
            "acceptance_why": [a for a, _ in ANSWERS],
            "action_why": [b for _, b in ANSWERS],
        }
    )
    ev.to_csv(folder / "evaluations.csv", index=False)
    pd.DataFrame({"participant": ["p1", "p2", "p3"]}).to_csv(
        folder / "participants.csv", index=False
    )
    return folder


def test_agreement_files_equal_the_library(tmp_path):
    r = run_analysis("coding", "agreement", "--codings", str(HERE / "codings.csv"),
                     "--out", str(tmp_path / "out"))  # fmt: skip
    assert r.returncode == 0, r.stderr
    codings = pd.read_csv(HERE / "codings.csv", dtype=str, keep_default_na=False)
    lib = agreement(codings)
    alpha = pd.read_csv(tmp_path / "out" / "alpha.csv")
    pd.testing.assert_series_equal(alpha["alpha"], lib.alpha["alpha"], check_names=False)
    assert len(pd.read_csv(tmp_path / "out" / "kappa.csv")) == len(lib.kappa) == 4 * 3


def test_quotes_by_code_and_rating_band(export, tmp_path):
    final = pd.DataFrame(
        {"unit": ["11:acceptance_why", "12:acceptance_why", "21:acceptance_why", "12:action_why"],
         "code": ["cost", "cost", "effort", "cost"]}
    )  # fmt: skip
    final.to_csv(tmp_path / "final.csv", index=False)
    out = tmp_path / "q"
    r = run_analysis("coding", "quotes", "--export", str(export), "--codings",
                     str(tmp_path / "final.csv"), "--code", "cost", "--ratings", "1-2",
                     "--out", str(out))  # fmt: skip
    assert r.returncode == 0, r.stderr
    q = pd.read_csv(out / "quotes.csv")
    # cost answers rated 1-2: 11 acceptance (2), 12 acceptance (1), 12 action (2)
    assert sorted(zip(q["quote"], q["rating"], q["strategy"], strict=True)) == [
        ("I cannot afford a degree | now", 1, "wachter"),
        ("money", 2, "wachter"),
        ("too expensive to change jobs", 2, "sparsest"),
    ]
    md = (out / "quotes.md").read_text()
    assert "I cannot afford a degree \\| now" in md  # a pipe cannot break the table
    tex = (out / "quotes.tex").read_text()
    assert "\\begin{longtable}" in tex and "money" in tex


def test_suggestions_are_labelled_as_such(export, tmp_path):
    r = run_analysis("coding", "suggest", "--export", str(export), "--field", "action_why",
                     "--k", "2", "--out", str(tmp_path / "s"))  # fmt: skip
    assert r.returncode == 0, r.stderr
    s = pd.read_csv(tmp_path / "s" / "suggestions.csv")
    assert len(s) == 5 and set(s["suggested_group"]) <= {"suggestion-1", "suggestion-2"}
    assert "code" not in s.columns


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["agreement", "--codings", "nope.csv"], "nope.csv: no such file"),
        (["quotes", "--ratings", "5-1"], "rating band 5-1 is empty"),
        (["quotes", "--ratings", "low"], "--ratings 'low': expected a band such as 1-3"),
        (["quotes", "--code", "cost"], "choosing quotes by code needs the codes"),
        (["suggest", "--field", "action_why", "--k", "1"], "k must be at least 2"),
    ],
)
def test_bad_input_is_refused_with_one_line(export, tmp_path, args, message):
    if args[0] != "agreement":
        args = [args[0], "--export", str(export), *args[1:]]
    out = tmp_path / "never"
    r = run_analysis("coding", *args, "--out", str(out))
    assert r.returncode == 2 and r.stderr.startswith("error: ") and message in r.stderr, r.stderr
    assert not out.exists()


def test_duplicate_codebook_codes_are_refused(tmp_path):
    (tmp_path / "book.csv").write_text("code,definition\ncost,money\ncost,again\n")
    r = run_analysis("coding", "agreement", "--codings", str(HERE / "codings.csv"),
                     "--codebook", str(tmp_path / "book.csv"), "--out", str(tmp_path / "o"))  # fmt: skip
    assert r.returncode == 2 and "duplicate code 'cost'" in r.stderr
    assert Codebook.read(HERE.parent / "coding" / "codebook.csv").names == [
        "cost",
        "effort",
        "unrealistic",
    ]
