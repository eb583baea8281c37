"""`python -m analysis methods`, the method-comparison report (analysis.study.methods_report).

The study is the one `tests/analysis/gamm/make_study_report_fixtures.R` simulated (seed 1313,
160 participants x 6 ratings, four strategies, truth below) and fitted with mgcv 1.8-41; the
export built from it adds evaluations that must be dropped, each for a known reason, so the
kept evaluations are exactly the ones mgcv saw. Numbers are checked against mgcv's, the
verdicts and intervals against the simulation's truth, the counts against pandas directly.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.study.methods_report import build_report, level_curves
from analysis.study.selection import (
    ATTENTION,
    FALLBACK,
    IMPOSSIBLE,
    WITHDREW,
    load_study_export,
)
from tests.run_cli import run_analysis

from .export_folder import write_export

FIX = Path(__file__).parents[1] / "gamm" / "fixtures"
#: the simulation's strategy effects against ebr (make_study_report_fixtures.R's header)
TRUTH = {
    "acceptance": {"proximate": 0.6, "random": -0.8, "wachter": 0.0},
    "action": {"proximate": 0.4, "random": -0.5, "wachter": -0.9},
}
LEVELS = ["ebr", "proximate", "random", "wachter"]


def _mgcv(outcome: str) -> dict:
    return json.loads((FIX / f"study_report_{outcome}.json").read_text())


def _rel(a: float, b: float) -> float:
    return abs(a - b) / max(abs(b), 1e-12)


def _rows(base: pd.DataFrame, n: int, start: int, **values) -> pd.DataFrame:
    """n more evaluations shaped like `base`'s, with new recourse ids and the given values."""
    rows = base.iloc[:n].copy()
    rows["recourse"] = np.arange(start, start + n)
    for col, v in values.items():
        rows[col] = v
    return rows


def export_frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The mgcv study plus evaluations to drop: 3 withdrawn and 4 attention-failed
    participants (2 by outcome, 2 by the excluded flag), 9 plans with an impossible item, 4
    fallbacks shown instead of wachter's counterfactual, 2 without a strategy, a level with 5
    evaluations and one with 25 evaluations on 2 distances; 2 participants never rated."""
    study = pd.read_csv(FIX / "study_report.csv", dtype={"participant": str})
    study["origin"] = np.where(study["strategy"] == "wachter", "generated", "pool")
    study["method"] = np.where(study["strategy"] == "wachter", "wachter", "pool_search")
    study["condition"] = "control"
    study["fallback"] = ""
    ids = list(study["participant"].unique())
    extra = []
    status = {}
    for i, why in enumerate(["withdrew"] * 3 + ["failed_attention"] * 2 + ["excluded"] * 2):
        pid = str(900 + i)
        status[pid] = why
        extra.append(_rows(study, 6, 5000 + 10 * i, participant=pid, acceptance=7, action=7))
    extra.append(_rows(study, 9, 6000, any_impossible=1, acceptance=1, proximity=9.0))
    extra.append(_rows(study, 2, 6100, strategy=np.nan))
    extra.append(_rows(study.iloc[3:], 4, 6150, strategy="wachter", fallback="none found: pool"))
    extra.append(_rows(study, 5, 6200, strategy="fair_rl", method="fair_rl"))
    flat = _rows(study.iloc[100:], 25, 6300, strategy="gs", method="gs")
    flat["proximity"] = np.tile([0.5, 1.0], 13)[:25]
    extra.append(flat)
    evaluations = pd.concat([study, *extra], ignore_index=True)
    participants = pd.DataFrame({"participant": ids + list(status) + ["998", "999"]})
    outcome = {"withdrew": "withdrew", "failed_attention": "failed_attention"}
    participants["outcome"] = [
        outcome.get(status.get(p, ""), "completed") for p in participants.participant
    ]
    participants["state"] = np.where(
        participants["outcome"] == "withdrew", "withdrawn", "completed"
    )
    participants["attention_excluded"] = [
        int(status.get(p) in ("failed_attention", "excluded")) for p in participants.participant
    ]
    return evaluations, participants


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory) -> Path:
    return write_export(tmp_path_factory.mktemp("methods") / "export", *export_frames())


@pytest.fixture(scope="module")
def report(export_dir):
    return build_report(load_study_export(export_dir), str(export_dir))


@pytest.fixture(scope="module")
def cli(export_dir):
    out = export_dir.parent / "report"
    r = run_analysis("methods", "--export", str(export_dir), "--out", str(out))
    return r, out, out / "summary.json"


# --- numbers against mgcv ----------------------------------------------------------------------


@pytest.mark.parametrize("outcome", ["acceptance", "action"])
def test_contrasts_equal_mgcv(report, outcome):
    ref = _mgcv(outcome)["common"]["parametric"]
    got = {c.term: c for c in report.outcomes[outcome].contrasts}
    assert list(got) == [k for k in ref if k != "(Intercept)"]  # mgcv's names and order
    for term, c in got.items():
        assert _rel(c.estimate, ref[term]["estimate"]) < 0.01, term
        assert _rel(c.se, ref[term]["se"]) < 0.01, term
        assert (c.p < 0.05) == (ref[term]["p"] < 0.05), term


@pytest.mark.parametrize("outcome", ["acceptance", "action"])
def test_another_reference_equals_mgcv_relevel(export_dir, outcome):
    rep = build_report(load_study_export(export_dir), "x", reference="proximate")
    ref = _mgcv(outcome)["relevel"]["parametric"]
    got = {c.term: c for c in rep.outcomes[outcome].contrasts}
    assert sorted(got) == sorted(k for k in ref if k != "(Intercept)")
    for term, c in got.items():
        assert _rel(c.estimate, ref[term]["estimate"]) < 0.01, term
        assert _rel(c.se, ref[term]["se"]) < 0.01, term
        assert (c.p < 0.05) == (ref[term]["p"] < 0.05), term


@pytest.mark.parametrize("outcome", ["acceptance", "action"])
def test_smooths_by_level_equal_mgcv(report, outcome):
    ref = _mgcv(outcome)["by"]["smooth"]
    for level, row in report.outcomes[outcome].smooths.items():
        mg = ref[f"s(proximity):strategy{level}"]
        assert abs(row["edf"] - mg["edf"]) < 0.05, level
        assert _rel(row["F"], mg["F"]) < 0.03, level
        assert (row["p"] < 0.05) == (mg["p"] < 0.05), level


@pytest.mark.parametrize("outcome", ["acceptance", "action"])
def test_curves_and_bands_equal_mgcv_predict(report, outcome):
    o = report.outcomes[outcome]
    data = report.selection.kept
    ours = level_curves(o.fits["by"], data, "strategy", "proximity", points=25)
    ref = pd.DataFrame(_mgcv(outcome)["predict"])
    assert list(ours["level"]) == list(ref["strategy"])
    np.testing.assert_allclose(ours["proximity"], ref["proximity"], atol=1e-9)
    np.testing.assert_allclose(ours["fit"], ref["fit"], atol=2e-3)
    np.testing.assert_allclose(ours["se"], ref["se"], rtol=0.01)
    np.testing.assert_allclose(ours["upper"] - ours["lower"], 2 * 1.959964 * ref["se"], rtol=0.01)


@pytest.mark.parametrize("outcome", ["acceptance", "action"])
def test_model_comparison_equals_mgcv_anova(report, outcome):
    ref = _mgcv(outcome)
    cmp = report.outcomes[outcome].comparison
    assert _rel(cmp.aic_common, ref["ml0"]["aic"]) < 0.002
    assert _rel(cmp.aic_by, ref["ml1"]["aic"]) < 0.002
    assert _rel(cmp.df, ref["anova"]["df"]) < 0.03
    assert _rel(cmp.deviance, ref["anova"]["deviance"]) < 0.01
    assert (cmp.p < 0.05) == (ref["anova"]["p"] < 0.05)
    if ref["anova"]["p"] > 1e-3:
        assert _rel(cmp.p, ref["anova"]["p"]) < 0.1


# --- against the simulation's truth -------------------------------------------------------------


@pytest.mark.parametrize("outcome", ["acceptance", "action"])
def test_intervals_cover_the_truth_and_detect_it(report, outcome):
    for c in report.outcomes[outcome].contrasts:
        truth = TRUTH[outcome][c.level]
        assert c.lower < truth < c.upper, (outcome, c)
        if truth != 0:  # a real effect is found: the interval leaves 0 out, p < 0.05
            assert not c.lower < 0 < c.upper and c.p < 0.05, (outcome, c)
        else:
            assert c.lower < 0 < c.upper and c.p >= 0.05, (outcome, c)
        assert c.upper - c.estimate == pytest.approx(c.estimate - c.lower)


def test_verdict_says_differs_only_where_the_distance_effect_differs(report):
    acc, act = report.outcomes["acceptance"].comparison, report.outcomes["action"].comparison
    assert acc.differs and acc.p < 0.05
    assert "the distance effect differs by strategy" in acc.verdict
    assert not act.differs and act.p >= 0.05
    assert "does not clearly differ by strategy" in act.verdict
    assert "differs by" not in act.verdict


# --- kept and dropped ------------------------------------------------------------------------------


def _direct_counts(folder: Path) -> pd.Series:
    """Each evaluation's reason, counted straight from the CSVs."""
    ev = pd.read_csv(folder / "evaluations.csv", dtype={"participant": str})
    pa = pd.read_csv(folder / "participants.csv", dtype={"participant": str})
    m = ev.merge(pa, on="participant", how="left")
    reason = pd.Series("", index=m.index, dtype=object)
    reason[m["outcome"] == "withdrew"] = WITHDREW
    failed = (m["outcome"] == "failed_attention") | (m["attention_excluded"] == 1)
    reason[(reason == "") & failed] = ATTENTION
    reason[(reason == "") & (m["any_impossible"] == 1)] = IMPOSSIBLE
    reason[(reason == "") & m["fallback"].notna()] = FALLBACK
    reason[(reason == "") & m["strategy"].isna()] = "no strategy value"
    live = m[reason == ""]
    size, distinct = (
        live.groupby("strategy").size(),
        live.groupby("strategy")["proximity"].nunique(),
    )
    for level in size.index:
        where = (reason == "") & (m["strategy"] == level)
        if size[level] < 20:
            reason[where] = "strategy level with fewer than 20 evaluations"
        elif distinct[level] < 3:
            reason[where] = "strategy level with fewer than 3 distinct proximity values"
    return reason


def test_kept_and_dropped_equal_a_direct_count(report, export_dir):
    direct = _direct_counts(export_dir)
    sel = report.selection
    assert sel.n_kept == int((direct == "").sum()) == 960
    assert sel.n_dropped == int((direct != "").sum()) == 18 + 24 + 9 + 4 + 2 + 5 + 25
    assert sel.dropped_by_reason() == direct[direct != ""].value_counts().to_dict()
    assert list(sel.dropped_by_reason()) == [  # in the order the rules apply
        WITHDREW,
        ATTENTION,
        IMPOSSIBLE,
        FALLBACK,
        "no strategy value",
        "strategy level with fewer than 20 evaluations",
        "strategy level with fewer than 3 distinct proximity values",
    ]
    assert sel.levels == LEVELS and sel.k == 10
    study = pd.read_csv(FIX / "study_report.csv", dtype={"participant": str})
    assert sorted(sel.kept["recourse"].astype(int)) == list(study["recourse"])  # what mgcv fitted
    table = sel.by_level()
    assert table.loc["fair_rl", "dropped"] == 5 and table.loc["gs", "dropped"] == 25
    assert table.loc["(empty)", "no strategy value"] == 2
    assert int(table["kept"].sum()) == 960 and int(table["dropped"].sum()) == sel.n_dropped
    assert sel.participants == {
        "total": 169,
        "kept": 160,
        WITHDREW: 3,
        ATTENTION: 4,
        "no evaluations": 2,
    }


def test_every_table_states_kept_and_dropped(cli, report):
    r, out, js = cli
    assert r.returncode == 0, r.stderr
    for name in ("contrasts.csv", "smooths.csv", "comparison.csv"):
        t = pd.read_csv(out / name)
        assert set(t["n_kept"]) == {960} and set(t["n_dropped"]) == {report.selection.n_dropped}
    text = (out / "report.md").read_text()
    assert text.count(f"Evaluations: 960 kept, {report.selection.n_dropped} dropped") == 2
    for reason in (WITHDREW, ATTENTION, IMPOSSIBLE, FALLBACK, "no strategy value"):
        assert reason in text
    summary = json.loads(js.read_text())
    assert summary["evaluations"]["dropped_by_reason"] == report.selection.dropped_by_reason()
    for o in ("acceptance", "action"):
        assert summary["outcomes"][o]["n_kept"] == 960


# --- the command ---------------------------------------------------------------------------------


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def test_cli_writes_what_it_says(cli, report):
    r, out, js = cli
    assert r.returncode == 0, r.stderr
    said = r.stdout.strip().splitlines()[-1]
    assert said.startswith("wrote ")
    written = [Path(p) for p in said[len("wrote ") :].split(", ")]
    assert sorted(p.name for p in written) == sorted(
        [
            "report.md",
            "descriptives.csv",
            "contrasts.csv",
            "smooths.csv",
            "comparison.csv",
            "evaluations_by_level.csv",
            "smooths_acceptance.png",
            "smooths_action.png",
            "summary.json",
        ]
    )
    for p in written:
        assert p.stat().st_size > 0, p
    assert sorted(x.name for x in out.iterdir()) == sorted(p.name for p in written)
    for outcome in ("acceptance", "action"):
        w, h = _png_size(out / f"smooths_{outcome}.png")
        assert w / 150 <= 7.6 and h / 150 <= 10.1  # inches at 150 dpi: fits A4 and letter
        assert f"(smooths_{outcome}.png)" in (out / "report.md").read_text()
    contrasts = pd.read_csv(out / "contrasts.csv")
    assert list(contrasts["term"]) == [
        c.term for o in report.outcomes.values() for c in o.contrasts
    ]
    ours = report.outcomes["action"].contrasts[2]
    row = contrasts[(contrasts.outcome == "action") & (contrasts.term == ours.term)].iloc[0]
    assert row["estimate"] == pytest.approx(ours.estimate) and row["upper"] == pytest.approx(
        ours.upper
    )
    smooths = pd.read_csv(out / "smooths.csv")
    assert len(smooths) == 2 * 4 * 50 and set(smooths["level"]) == set(LEVELS)
    assert (smooths["lower"] < smooths["fit"]).all() and (smooths["fit"] < smooths["upper"]).all()
    comparison = pd.read_csv(out / "comparison.csv")
    assert list(comparison["differs"]) == [True, False]
    summary = json.loads(js.read_text())
    assert summary["reference"] == "ebr" and summary["levels"] == LEVELS
    assert summary["outcomes"]["acceptance"]["comparison"]["differs"] is True
    for term in ("strategyproximate", "strategyrandom", "strategywachter"):
        assert term in r.stdout
    assert "the distance effect differs by strategy" in r.stdout


def test_a_zip_export_gives_the_same_report(export_dir, report, tmp_path):
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for f in export_dir.iterdir():
            zf.write(f, f"carloan-export/{f.name}")
    rep = build_report(load_study_export(archive), str(archive))
    assert rep.selection.dropped_by_reason() == report.selection.dropped_by_reason()
    for o in ("acceptance", "action"):
        a, b = rep.outcomes[o].contrasts, report.outcomes[o].contrasts
        assert [x.estimate for x in a] == pytest.approx([x.estimate for x in b], rel=1e-9)


def test_sparsity_lowers_k_to_the_fewest_distinct_values(export_dir):
    rep = build_report(load_study_export(export_dir), "x", "strategy", "sparsity")
    fewest = rep.selection.kept.groupby("strategy")["sparsity"].nunique().min()
    assert rep.selection.k == min(10, fewest) < 10
    assert f"s(sparsity, by = strategy, k = {rep.selection.k})" in rep.outcomes["action"].formula_by


# --- bad input -------------------------------------------------------------------------------------


def _variant(export_dir: Path, folder: Path, edit) -> Path:
    """A copy of the export whose evaluations went through `edit`."""
    folder.mkdir()
    ev = pd.read_csv(export_dir / "evaluations.csv", dtype={"participant": str})
    edit(ev).to_csv(folder / "evaluations.csv", index=False)
    (folder / "participants.csv").write_bytes((export_dir / "participants.csv").read_bytes())
    return folder


@pytest.mark.parametrize(
    ("case", "args", "words"),
    [
        ("missing", ["--export", "{tmp}/nowhere"], "no such file or folder"),
        ("not a zip", ["--export", "{tmp}/junk.zip"], "neither an export folder nor a ZIP"),
        (
            "no factor",
            ["--export", "{export}", "--factor", "method_name"],
            "no column 'method_name'",
        ),
        (
            "no factor column",
            ["--export", "{no_method}", "--factor", "method"],
            "no column 'method'",
        ),
        ("single level", ["--export", "{single}"], "single level ('random')"),
        (
            "unknown reference",
            ["--export", "{export}", "--reference", "wachtr"],
            "'wachtr' is not a level",
        ),
        (
            "dropped reference",
            ["--export", "{export}", "--reference", "fair_rl"],
            "too few evaluations",
        ),
        ("too few", ["--export", "{export}", "--min-per-level", "250"], "too few evaluations"),
        ("small k", ["--export", "{export}", "--k", "2"], "--k must be at least 3"),
        ("no participants", ["--export", "{lone}"], "lone: neither participants.csv"),
        ("zip without them", ["--export", "{tmp}/lone.zip"], "lone.zip: neither participants.csv"),
    ],
)
def test_bad_input_is_refused_and_writes_nothing(export_dir, tmp_path, case, args, words):
    (tmp_path / "junk.zip").write_text("not a zip")
    (tmp_path / "lone").mkdir()
    (tmp_path / "lone" / "evaluations.csv").write_bytes(
        (export_dir / "evaluations.csv").read_bytes()
    )
    with zipfile.ZipFile(tmp_path / "lone.zip", "w") as zf:
        zf.write(tmp_path / "lone" / "evaluations.csv", "evaluations.csv")
    paths = {
        "tmp": tmp_path,
        "export": export_dir,
        "lone": tmp_path / "lone",
        "no_method": _variant(export_dir, tmp_path / "a", lambda ev: ev.drop(columns="method")),
        "single": _variant(export_dir, tmp_path / "b", lambda ev: ev.assign(strategy="random")),
    }
    out = tmp_path / "out"
    argv = [a.format(**paths) for a in args]
    r = run_analysis("methods", *argv, "--out", str(out))
    assert r.returncode == 2, (case, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert words in lines[0] and "export-" not in lines[0], lines[0]  # no temporary folder
    assert not out.exists()
    assert r.stdout == ""
