"""The methods report (`recourse-analysis methods`) on the small study of
make_no_lr_test_fixtures.R, whose ratings carry no effect: the descriptive table comes first
and equals a direct pandas groupby of the CSVs, and where mgcv's anova would print a
likelihood-ratio test on a negative df difference (p = 0.024 beside an AIC favouring the
common smooth) the report makes no test and says why.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.study.methods_report import build_report
from analysis.study.selection import load_study_export
from tests.run_cli import run_analysis

from .export_folder import write_export

FIX = Path(__file__).parents[1] / "gamm" / "fixtures"


def export_frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Seed 28's 210 evaluations plus some to drop: a withdrawn participant's three (rated 7)
    and two with an item marked impossible (rated 1)."""
    ev = pd.read_csv(FIX / "study_no_lr_test_28.csv")
    ev["recourse"] = np.arange(1, len(ev) + 1)
    ev["sparsity"] = np.ceil(ev["proximity"]).astype(int)
    ev["any_impossible"] = 0
    gone = ev.iloc[:3].assign(participant="p99", acceptance=7, action=7, recourse=[901, 902, 903])
    impossible = ev.iloc[3:5].assign(any_impossible=1, acceptance=1, action=1, recourse=[904, 905])
    ev = pd.concat([ev, gone, impossible], ignore_index=True)
    pa = pd.DataFrame({"participant": sorted(ev["participant"].unique())})
    pa["outcome"] = np.where(pa["participant"] == "p99", "withdrew", "completed")
    return ev, pa


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory) -> Path:
    return write_export(tmp_path_factory.mktemp("no_lr_test") / "export", *export_frames())


@pytest.fixture(scope="module")
def report(export_dir):
    return build_report(load_study_export(export_dir), str(export_dir), k=5)


@pytest.fixture(scope="module")
def cli(export_dir):
    out = export_dir.parent / "report"
    r = run_analysis("methods", "--export", str(export_dir), "--out", str(out), "--k", "5")
    assert r.returncode == 0, r.stderr
    return r, out


def _direct(folder: Path) -> pd.DataFrame:
    """n, mean, SD per condition x strategy, straight from the CSVs."""
    ev = pd.read_csv(folder / "evaluations.csv")
    pa = pd.read_csv(folder / "participants.csv")
    ev = ev.merge(pa, on="participant")
    ev = ev[(ev["outcome"] != "withdrew") & (ev["any_impossible"] == 0)]
    g = ev.groupby(["condition", "strategy"])
    return pd.DataFrame(
        {
            "n": g.size(),
            "acceptance_mean": g["acceptance"].mean(),
            "acceptance_sd": g["acceptance"].std(),
            "action_mean": g["action"].mean(),
            "action_sd": g["action"].std(),
        }
    ).reset_index()


def test_descriptive_table_equals_a_direct_groupby(report, export_dir):
    ours, direct = report.descriptives, _direct(export_dir)
    assert list(ours.columns) == list(direct.columns)
    assert list(zip(ours["condition"], ours["strategy"], strict=True)) == [
        ("A", "ebr"),
        ("A", "proximate"),
        ("A", "wachter"),
        ("B", "gs"),
        ("B", "random"),
        ("B", "wachter"),
    ]
    assert list(ours["n"]) == list(direct["n"]) and sum(ours["n"]) == 210
    for col in ("acceptance_mean", "acceptance_sd", "action_mean", "action_sd"):
        np.testing.assert_allclose(ours[col], direct[col], rtol=1e-12, err_msg=col)


def test_report_shows_the_table_before_the_models(cli, report):
    r, out = cli
    text = (out / "report.md").read_text()
    table = text.index("## Ratings by condition and strategy")
    assert table < text.index("## acceptance\n") < text.index("### Contrasts against")
    first = report.descriptives.iloc[0]
    row = f"| A | ebr | {first.n} | {first.acceptance_mean:.2f} ({first.acceptance_sd:.2f}) |"
    assert row in text
    written = pd.read_csv(out / "descriptives.csv")
    assert written["n"].tolist() == report.descriptives["n"].tolist()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["descriptives"][0]["condition"] == "A"
    assert summary["descriptives"][0]["n"] == int(first.n)
    assert r.stdout.index("acceptance mean (SD)") < r.stdout.index("acceptance (vs ebr)")


def test_negative_df_difference_gives_no_p_value_and_a_plain_statement(report):
    mgcv = json.loads((FIX / "no_lr_test_anova.json").read_text())["28"]
    cmp = report.outcomes["acceptance"].comparison
    assert cmp.df < 0 and abs(cmp.df - mgcv["df"]) < 0.01  # what mgcv printed a test on
    assert mgcv["p"] < 0.05
    assert cmp.p is None and not cmp.differs
    assert "no more effective degrees of freedom" in cmp.no_test
    assert cmp.verdict.startswith("For acceptance, no likelihood-ratio test: ")
    assert "AIC favours one common smooth" in cmp.verdict
    assert "p =" not in cmp.verdict and "differs by" not in cmp.verdict


def test_the_files_say_there_is_no_test(cli):
    r, out = cli
    text = (out / "report.md").read_text()
    section = text[text.index("## acceptance\n") : text.index("## action\n")]
    assert "No likelihood-ratio test: the larger model uses no more effective" in section
    assert "Likelihood-ratio test (`anova.gam" not in section
    comparison = pd.read_csv(out / "comparison.csv").set_index("outcome")
    assert pd.isna(comparison.loc["acceptance", "p"])
    assert "no more effective degrees" in comparison.loc["acceptance", "no_test"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["outcomes"]["acceptance"]["comparison"]["p"] is None
    assert "For acceptance, no likelihood-ratio test" in r.stdout
