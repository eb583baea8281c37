"""A new segregation index is one catalogue entry: a throwaway index, added through the
catalogue alone, is computed and reported by the study's effects report and by the
experiment's reports, with its resampled computation in the bootstrap over people."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest

from analysis.__main__ import main
from analysis.experiment.people import PeopleDraws, resampled_indices
from analysis.experiment.report import SETTINGS
from analysis.experiment.report import report as reproduction_report
from analysis.segregation import CATALOGUE, SegregationIndex, segregation_indices
from analysis.segregation.catalogue import names
from analysis.segregation.settings_indices import IndexSettings, indices_under

from .export_generator import make_export
from .hand_built import populations

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _gap(X: np.ndarray, is_min: np.ndarray) -> float:
    """The throwaway index, written out: the minority's mean coordinate minus the majority's."""
    return float(X[is_min].mean() - X[~is_min].mean())


def _gap_resampled(rs) -> np.ndarray:
    row = rs.X.mean(axis=1)
    mi, ma = rs.idx_min, rs.idx_maj
    return rs.counts[:, mi] @ row[mi] / rs.counts[:, mi].sum(1) - (
        rs.counts[:, ma] @ row[ma] / rs.counts[:, ma].sum(1)
    )


@pytest.fixture
def mean_gap(monkeypatch):
    """The catalogue with one more index, for this test only (removed afterwards)."""
    entry = SegregationIndex(
        "mean_gap",
        "Mean gap",
        "gap",
        True,
        lambda pop: _gap(pop.X, pop.is_min),
        _gap_resampled,
    )
    monkeypatch.setitem(CATALOGUE, entry.name, entry)
    return entry


def test_the_fixture_leaves_the_catalogue_as_it_was(mean_gap):
    assert names()[-1] == "mean_gap" and len(names()) == 4


def test_the_catalogue_is_back_to_its_three_indices():
    assert names() == ("centralization", "atkinson", "avg_proximity")


def test_a_new_index_is_computed_exactly_and_on_resamples(mean_gap):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(120, 3))
    g = rng.integers(0, 2, 120)
    r = segregation_indices(X, g, clusters=5)
    is_min = g == r.minority
    assert r.values["mean_gap"] == pytest.approx(_gap(X, is_min), abs=1e-12)
    assert r.mean_gap == r.values["mean_gap"]
    assert list(r.to_json())[-1] == "mean_gap" and "mean_gap" in r.to_frame().columns
    settings = IndexSettings(clusters=5)
    origin = indices_under(X, g, settings)
    draws = PeopleDraws.draw(len(X), 4, seed=1)
    fast = resampled_indices(X, g, settings, origin, draws)
    assert fast.shape == (4, 4)
    for b, idx in enumerate(draws.idx):
        assert fast[b, 3] == pytest.approx(_gap(X[idx], is_min[idx]), abs=1e-12)


def test_a_new_index_is_in_the_study_effects_report(mean_gap, tmp_path):
    export = make_export(tmp_path / "export", n=40)
    out = tmp_path / "effects"
    argv = ["effects", "--export", str(export), "--group", "gender", "--out", str(out)]
    assert main([*argv, "--bootstrap", "20", "--draws", "5", "--clusters", "5"]) == 0
    got = json.loads((out / "effects.json").read_text())
    X0, X1, is_min = populations(export, "strategy", "sparsest")
    assert got["before"]["mean_gap"] == pytest.approx(_gap(X0, is_min), abs=1e-12)
    arm = got["strategies"]["sparsest"]
    assert arm["after"]["mean_gap"] == pytest.approx(_gap(X1, is_min), abs=1e-12)
    change = arm["difference"]["mean_gap"]
    assert change["estimate"] == pytest.approx(_gap(X1, is_min) - _gap(X0, is_min), abs=1e-12)
    assert change["verdict"] in ("worse", "better", "no clear change")
    assert len(arm["curve"]["mean_gap"]) == len(arm["curve"]["pi"])
    assert "mean_gap" in arm["partial"]
    table = pd.read_csv(out / "effects.csv")
    assert set(table.loc[table["index"] == "mean_gap", "arm"]) == set(got["strategies"])
    page = (out / "report.html").read_text()
    assert "<td>mean_gap</td>" in page and "of 4 indices" in page


def test_a_new_index_is_in_the_experiment_reports(mean_gap, tmp_path):
    out = tmp_path / "sound"
    argv = ["experiment", "--methods", "wachter", "--runs", "1", "--clusters", "5"]
    assert main([*argv, "--out", str(out), "--quiet"]) == 0
    runs = pd.read_csv(out / "runs.csv")
    origin = runs[(runs["method"] == "origin") & (runs["metric"] == "mean_gap")]
    assert len(origin) == 1 and np.isfinite(origin["value"].iloc[0])
    results = pd.read_csv(out / "results.csv")
    row = results[(results["method"] == "wachter") & (results["metric"] == "mean_gap")].iloc[0]
    assert row["interval"].startswith("bootstrap over people")  # the resampled computation
    assert row["diff_lo"] <= row["diff_mean"] <= row["diff_hi"]
    assert row["verdict"] in ("worse", "better", "no clear change")
    md = (out / "results.md").read_text()
    assert "| mean_gap |" in md and "Δ mean_gap" in md
    for name in SETTINGS:  # the reproduction report reads three settings' folders
        if name != "sound":
            shutil.copytree(out, tmp_path / name)
    text = reproduction_report("synthetic", tmp_path, ["wachter"], {}, load=(0.0, 0.0, 0.0))
    assert "| setting | centr. | Atk. | prox. | gap |" in text
    assert "Δ gap |" in text and "Mean gap:" in text
