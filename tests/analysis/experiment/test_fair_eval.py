"""The experiment's held-out split, the fair_rl ablation rows, the audit and twin columns
and the paired effects against the no-fairness reward."""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import analysis.experiment.run as run_mod
from analysis.experiment.fair_eval import ablations, effects, same_fits
from analysis.experiment.settings import ExperimentSettings, SettingsError, preset
from analysis.experiment.space import heldout_split
from recourse_engine.datasets import fair_scenario

pytestmark = pytest.mark.usefixtures("one_torch_thread")
TINY = {"steps": 20, "warmup": 10, "batch": 32, "n_envs": 8}


def test_heldout_split_is_disjoint_seeded_and_recorded():
    data = fair_scenario(seed=0, n=40)
    train, test, rec = heldout_split(data, 0.25, seed=3)
    rows = rec["test_rows"]
    assert (rec["n_train"], rec["n_test"], len(rows)) == (30, 10, 10)
    assert np.array_equal(test.codes, data.codes[rows])
    rest = np.setdiff1d(np.arange(40), rows)
    assert np.array_equal(train.codes, data.codes[rest]) and np.array_equal(train.y, data.y[rest])
    assert rec["test_rows_sha256"] == hashlib.sha256(rows.astype(np.int64).tobytes()).hexdigest()
    again = heldout_split(data, 0.25, seed=3)[2]["test_rows"]
    other = heldout_split(data, 0.25, seed=4)[2]["test_rows"]
    assert np.array_equal(rows, again) and not np.array_equal(rows, other)
    assert preset("gao2023").holdout == 0.0 and ExperimentSettings().holdout == 0.25
    assert not preset("gao2023").fair_audits and ExperimentSettings().fair_audits
    with pytest.raises(SettingsError, match="holdout must be in"):
        ExperimentSettings(holdout=1.0)


def test_ablation_labels_and_params():
    got = ablations(["gs", "fair_rl", "fair_rl/none"], {"fair_rl/none": {"reward": "none"}})
    assert [(a, src, kind) for a, src, kind, _ in got] == [
        ("fair_rl/untrained", "fair_rl", "untrained"),
        ("fair_rl/no_fairness", "fair_rl", "no_fairness"),
        ("fair_rl/mean_action", "fair_rl", "mean_action"),
        ("fair_rl/none-untrained", "fair_rl/none", "untrained"),  # no no_fairness: it is one
        ("fair_rl/none-mean_action", "fair_rl/none", "mean_action"),
    ]
    params = {a: q for a, _, _, q in got}
    assert params["fair_rl/untrained"] == {"untrained": True}
    assert params["fair_rl/no_fairness"] == {"reward": "none"}
    assert params["fair_rl/none-untrained"] == {"reward": "none", "untrained": True}
    # two reward variants share one no-fairness fit; the first one is computed
    two = ablations(["fair_rl/a", "fair_rl/b"], {"fair_rl/a": {"reward": "ecr"}, "fair_rl/b": {}})
    every = {**{"fair_rl/a": {"reward": "ecr"}, "fair_rl/b": {}}, **{a: q for a, *_, q in two}}
    labels = ["fair_rl/a", "fair_rl/b", *[a for a, *_ in two]]
    assert same_fits(labels, two, every) == {"fair_rl/b-no_fairness": "fair_rl/a-no_fairness"}


def test_methods_are_fitted_on_the_training_rows_and_scored_on_the_heldout(monkeypatch):
    seen = {}
    real = run_mod.make_method

    def recording(label, seed, params=None, training=None):
        method = real(label, seed, params, training)
        fit = method.fit

        def fit_and_record(data, model):
            seen[label] = np.asarray(data.codes).copy()
            return fit(data, model)

        method.fit = fit_and_record
        return method

    monkeypatch.setattr(run_mod, "make_method", recording)
    data = fair_scenario(seed=0, n=200, bias=1.0)
    st = ExperimentSettings(people_resamples=0, factual_cap=20)
    rows, out = run_mod.run_once(data, ["fair_rl", "gs"], 0, params={"fair_rl": TINY}, settings=st)
    held = out["split"]["test_rows"]
    assert np.array_equal(out["data"].codes, data.codes[held])
    train_rows = np.setdiff1d(np.arange(200), held)
    for label in ("fair_rl", "gs", "fair_rl/untrained", "fair_rl/no_fairness"):
        assert np.array_equal(seen[label], data.codes[train_rows]), label
    assert "fair_rl/mean_action" not in seen  # the fitted policy, not refitted
    frame = pd.DataFrame(rows)
    methods = set(frame["method"])
    assert {"fair_rl/untrained", "fair_rl/no_fairness", "fair_rl/mean_action"} <= methods
    metrics = set(frame.loc[frame["method"] == "gs", "metric"])
    assert {"audit_ee_max", "audit_cost_unreachable", "twin_action_mismatch"} <= metrics
    # the factuals are the held-out rejected only
    n_rej = int((~out["model"].approves(data.codes[held])).sum())
    assert len(out["factuals"]["gs"]) == n_rej


def test_experiment_writes_split_audits_and_effects(tmp_path):
    params = {"fair_rl": TINY}
    st = ExperimentSettings(people_resamples=0, factual_cap=20)
    run_mod.run_experiment(
        "fair_scenario_biased", ["fair_rl"], 2, tmp_path, progress=False, params=params,
        settings=st,
    )  # fmt: skip
    split = pd.read_csv(tmp_path / "split.csv")
    assert split.groupby("run").size().tolist() == [500, 500]  # 25% of 2,000
    rec = json.loads((tmp_path / "settings.json").read_text())["splits"]
    assert [r["n_test"] for r in rec] == [500, 500] and len(rec[0]["test_rows_sha256"]) == 64
    assert set(pd.read_csv(tmp_path / "audits.csv")["method"]) >= {"fair_rl", "fair_rl/untrained"}
    fx = pd.read_csv(tmp_path / "fair_effects.csv")
    assert set(fx["reference"]) == {"fair_rl/no_fairness"}
    assert "against its no-fairness reward" in (tmp_path / "results.md").read_text()


def test_effects_are_paired_differences_with_a_t_interval():
    runs = pd.DataFrame(
        [
            {"run": r, "method": m, "metric": "proportion_difference", "value": v}
            for r, (a, b) in enumerate([(0.10, 0.30), (0.20, 0.25), (0.05, 0.30)])
            for m, v in (("fair_rl", a), ("fair_rl/no_fairness", b))
        ]
    )
    got = effects(runs, ["fair_rl"], {}).set_index("metric").loc["proportion_difference"]
    d = np.array([-0.20, -0.05, -0.25])
    half = stats.t.ppf(0.975, 2) * d.std(ddof=1) / math.sqrt(3)
    assert got["diff_mean"] == pytest.approx(d.mean())
    assert (got["diff_lo"], got["diff_hi"]) == pytest.approx((d.mean() - half, d.mean() + half))
    assert got["runs"] == 3
    assert got["p"] == pytest.approx(stats.ttest_1samp(d, 0.0).pvalue)
    assert got["p_holm"] == pytest.approx(got["p"])  # a family of one row
