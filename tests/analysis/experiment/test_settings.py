"""The experiment's settings each change what they should; the gao2023 preset and the
replicated defects; paired differences; the must-show command."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis.__main__ import main
from analysis.experiment.defects import ebr_farthest, zero_fill
from analysis.experiment.paired import interval, paired_frame, verdict
from analysis.experiment.run import population_features, run_once, train_decision_model
from analysis.experiment.settings import (
    ExperimentSettings,
    SettingsError,
    merge_params,
    preset,
)
from analysis.experiment.space import index_features, training_split
from analysis.segregation import segregation_indices
from recourse_engine import normalise
from recourse_engine.datasets import fair_scenario, synthetic
from recourse_engine.methods import get_method
from recourse_engine.methods.cchvae import adversary_objective

#: torch on one thread (tests/conftest.py): the cores are shared
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_must_show_command_writes_settings_runs_and_paired_columns(tmp_path):
    out = tmp_path / "o"
    argv = ["experiment", "--dataset", "synthetic", "--methods", "ebr,wachter", "--runs", "3"]
    assert main([*argv, "--preset", "gao2023", "--out", str(out), "--quiet"]) == 0
    meta = json.loads((out / "settings.json").read_text())
    assert meta["settings"] == preset("gao2023").to_json()
    assert meta["runs"] == 3 and meta["methods"] == ["ebr", "wachter"]
    runs = pd.read_csv(out / "runs.csv")
    assert set(runs["run"]) == {0, 1, 2}
    # one row per run x method x metric
    assert not runs.duplicated(["run", "method", "metric"]).any()
    res = pd.read_csv(out / "results.csv")
    for m in ("ebr", "wachter"):
        for k in ("centralization", "atkinson", "avg_proximity"):
            row = res[(res["method"] == m) & (res["metric"] == k)].iloc[0]
            d = runs[(runs["method"] == m) & (runs["metric"] == k)]
            assert row["diff_mean"] == pytest.approx((d["value"] - d["before"]).mean())
            assert row["diff_lo"] <= row["diff_mean"] <= row["diff_hi"]
            worse = (d["diff"] < 0) if k == "avg_proximity" else (d["diff"] > 0)
            assert row["worse_runs"] == worse.sum()
    md = (out / "results.md").read_text()
    assert "preset gao2023" in md and "replicated published defects off" in md
    assert "Replicated published defects (a)–(c) are ON" not in md


def test_defects_flag_is_stated_in_every_table(tmp_path):
    out = tmp_path / "d"
    argv = ["experiment", "--methods", "wachter", "--runs", "1", "--out", str(out), "--quiet"]
    assert main([*argv, "--replicate-published-defects"]) == 0
    md = (out / "results.md").read_text()
    assert md.count("Replicated published defects (a)–(c) are ON") == 2
    assert json.loads((out / "settings.json").read_text())["settings"]["replicate_defects"]


def test_sound_default_is_the_former_computation():
    data = synthetic(seed=5)
    rows, out = run_once(data, [], seed=5, settings=ExperimentSettings(holdout=0.0))
    got = {r["metric"]: r["value"] for r in rows}
    ref = segregation_indices(population_features(data, data.codes), data.group, seed=5)
    for k in ("centralization", "atkinson", "avg_proximity"):
        assert got[k] == pytest.approx(getattr(ref, k), abs=1e-12)
    assert ExperimentSettings() == preset("sound")
    assert not ExperimentSettings().replicate_defects


def test_index_space_and_scaling_change_the_columns():
    data = fair_scenario(seed=1)
    z = normalise(data.schema, data.codes)
    all_x = index_features(data, data.codes, "all", "clipped")
    mut_x = index_features(data, data.codes, "mutable", "clipped")
    assert np.allclose(all_x, population_features(data, data.codes))
    fixed = [it.key for it in data.schema.items if it.constraint == "fixed"]
    assert len(fixed) >= 2 and mut_x.shape[1] < all_x.shape[1]
    n_mut = sum(
        it.n_options if it.type == "categorical" else 1
        for it in data.schema.items
        if it.constraint != "fixed"
    )
    assert mut_x.shape[1] == n_mut
    ref = data.codes[:500]
    mm = index_features(data, data.codes[:50], "mutable", "minmax", ref)
    r = index_features(data, ref, "mutable", "clipped")
    lo, hi = r.min(axis=0), r.max(axis=0)
    want = (mut_x[:50] - lo) / np.where(hi > lo, hi - lo, 1.0)
    assert np.allclose(mm, want)
    assert not np.allclose(mm, mut_x[:50])
    assert z.shape[1] == all_x.shape[1] + 1  # the sensitive item's column is out


def test_training_split_population():
    data = synthetic(seed=2)
    st = ExperimentSettings(population="train", holdout=0.0)
    rows, out = run_once(data, [], seed=2, settings=st)
    pop = out["data"]
    assert len(pop) == round(0.75 * len(data))
    assert len(np.unique(pop.codes, axis=0)) == len(pop)
    again = training_split(data, 0.75, 2)
    assert np.array_equal(again.codes, pop.codes)  # seeded
    got = {r["metric"]: r["value"] for r in rows}
    ref = segregation_indices(population_features(pop, pop.codes), pop.group, seed=2)
    assert got["avg_proximity"] == pytest.approx(ref.avg_proximity, abs=1e-12)
    with pytest.raises(SettingsError):
        ExperimentSettings(train_share=1.0)


def test_preset_method_params_yield_to_epochs_batch_and_param():
    st = preset("gao2023")
    pp = st.method_params("law_sex")
    assert pp["ibr"]["adversary"] == "entropy" and pp["ibr"]["beta"] == 1.0
    assert st.method_params("gmc")["ibr"]["beta"] == 200.0
    merged = merge_params(pp, {"ibr": {"beta": 5.0}}, ["ibr", "ebr"], {"epochs": 7, "batch": None})
    assert merged["ibr"]["epochs"] == 7 and merged["ibr"]["batch"] == 32
    assert merged["ibr"]["beta"] == 5.0 and merged["ebr"] == {"beta_quantile": 0.6}
    assert preset("sound").method_params("law_sex") == {}
    m = get_method("ibr", seed=0, **merged["ibr"])
    assert (m.epochs, m.batch, m.adversary) == (7, 32, "entropy")


def test_ibr_entropy_adversary_objective_by_hand():
    import torch

    logits = torch.tensor([0.0, 2.0, -1.0])
    m = torch.tensor([1.0, 0.0, 1.0])
    p = 1 / (1 + np.exp(-np.array([0.0, 2.0, -1.0])))
    ent = -(p * np.log(p) + (1 - p) * np.log(1 - p)).mean()
    ce = -(np.log(p[0]) + np.log(1 - p[1]) + np.log(p[2])) / 3
    assert float(adversary_objective(logits, m, "entropy")) == pytest.approx(ent, abs=1e-6)
    assert float(adversary_objective(logits, m, "cross_entropy")) == pytest.approx(ce, abs=1e-6)
    data = synthetic(seed=1)
    model = train_decision_model(data, 1)
    with pytest.raises(ValueError, match="adversary"):
        get_method("ibr", seed=0, adversary="kl", epochs=1).fit(data, model)


def test_ibr_adversary_changes_the_training():
    data = synthetic(seed=1)
    model = train_decision_model(data, 1)
    z = normalise(data.schema, data.codes[:20])
    means = []
    for kind in ("cross_entropy", "entropy"):
        m = get_method("ibr", seed=0, adversary=kind, epochs=2, batch=128).fit(data, model)
        means.append(m.latent_mean(z))
    assert not np.allclose(means[0], means[1])


def test_zero_fill_and_ebr_farthest_defects():
    x = np.arange(12, dtype=float).reshape(4, 3)
    got = zero_fill(x, np.array([1, 3]), np.array([True, False, True]))
    assert np.array_equal(got[[0, 2]], x[[0, 2]])
    assert np.array_equal(got[1], [0.0, 4.0, 0.0]) and np.array_equal(got[3], [0.0, 10.0, 0.0])
    data = synthetic(seed=4)
    model = train_decision_model(data, 4)
    ebr = get_method("ebr", seed=0).fit(data, model)
    fact = data.codes[~model.approves(data.codes)][:5]
    far, ok = ebr_farthest(ebr, fact)
    assert ok.all()
    z = normalise(data.schema, fact)
    draws = ebr.kept_samples(z[:, ebr.cond_cols_])
    for i in range(5):
        d = np.linalg.norm(draws[i] - z[i, ebr.cols_], axis=1)
        best = draws[i][np.argmax(d)]
        assert np.allclose(normalise(data.schema, far[i : i + 1])[0, ebr.cols_], best, atol=1e-6)


def test_paired_interval_and_verdict():
    d = np.array([0.01, 0.03, 0.02])
    lo, hi, how = interval(d)
    half = stats.t.ppf(0.975, 2) * d.std(ddof=1) / math.sqrt(3)
    assert (lo, hi) == pytest.approx((d.mean() - half, d.mean() + half)) and how.startswith("t")
    lo, hi, how = interval(np.linspace(-1, 3, 12))  # from 10 runs too: t, not a bootstrap
    assert how == "t over 12 runs" and lo < 1.0 < hi
    assert verdict("atkinson", 0.001, 0.01) == "worse"
    assert verdict("avg_proximity", 0.001, 0.01) == "better"
    assert verdict("avg_proximity", -0.01, -0.001) == "worse"
    assert verdict("centralization", -0.01, 0.001) == "no clear change"
    runs = pd.DataFrame(
        {
            "method": ["a"] * 3,
            "metric": ["atkinson"] * 3,
            "value": [1.0, 1.0, 1.0],
            "before": [0.9, 0.95, 1.01],
            "diff": [0.1, 0.05, -0.01],
        }
    )
    row = paired_frame(runs).iloc[0]
    assert row["worse_runs"] == 2 and row["verdict"] == "no clear change"
