"""The experiment runner with fair_rl: the fair-recourse metrics per method in results.csv,
method variants by label, --param, and --epochs/--batch reaching the methods."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.__main__ import main
from analysis.experiment.run import make_method, metrics, parse_methods, run_experiment
from recourse_engine.methods.base import MethodError

FAIR = ("success_rate", "proportion_difference", "equal_effectiveness", "equal_choice")
QUALITY = ("validity", "gower_similarity", "sparsity", "plausibility")


#: torch on one thread (tests/conftest.py): the cores are shared
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_command_writes_the_fairness_metrics_per_method(tmp_path):
    out = tmp_path / "out"
    code = main(
        [
            "experiment", "--dataset", "fair_scenario_biased", "--methods", "fair_rl,gs",
            "--runs", "1", "--param", "fair_rl.steps=40", "--param", "fair_rl.warmup=10",
            "--batch", "64", "--out", str(out), "--quiet",
        ]
    )  # fmt: skip
    assert code == 0
    csv = pd.read_csv(out / "results.csv")
    assert list(csv.columns)[:4] == ["method", "metric", "mean", "sd"]
    for method in ("fair_rl", "gs"):
        got = set(csv.loc[csv["method"] == method, "metric"])
        assert set(FAIR) | set(QUALITY) <= got, method
    rows = csv.set_index(["method", "metric"])["mean"]
    assert 0.0 <= rows["fair_rl", "success_rate"] <= 1.0
    assert rows["gs", "validity"] == pytest.approx(rows["gs", "success_rate"])
    assert set(FAIR) | set(QUALITY) <= set(metrics())


def test_variants_by_label_and_params(tmp_path):
    params = {
        "fair_rl/none": {"reward": "none", "steps": 30, "warmup": 10, "batch": 64},
        "fair_rl/c2": {"clusters": 2, "steps": 30, "warmup": 10, "batch": 64},
    }
    summary = run_experiment(
        "fair_scenario", list(params), 1, tmp_path, progress=False, params=params
    )
    ablated = {"fair_rl/none-untrained", "fair_rl/none-mean_action"}  # none is no-fairness
    ablated |= {f"fair_rl/c2-{k}" for k in ("untrained", "no_fairness", "mean_action")}
    assert set(summary["method"]) == {"origin", *params, *ablated}


def test_training_options_reach_the_methods_that_have_them():
    training = {"epochs": 7, "batch": 32}
    assert make_method("cchvae", 0, None, training).epochs == 7
    assert make_method("cruds", 0, None, training).batch == 32
    assert make_method("fair_rl", 0, None, training).batch == 32  # its SAC minibatch
    assert make_method("fair_rl", 0, {"batch": 16}, training).batch == 16  # params win
    gs = make_method("gs", 0, None, training)  # no such parameters: left alone
    assert not hasattr(gs, "epochs")
    with pytest.raises(MethodError, match="unknown parameter 'colour'"):
        make_method("fair_rl", 0, {"colour": 1})


def test_cli_passes_epochs_and_batch(monkeypatch, tmp_path):
    seen = {}

    def fake(dataset, methods, runs, out, **kw):
        seen.update(kw)

    monkeypatch.setattr("analysis.experiment.run.run_experiment", fake)
    code = main(
        ["experiment", "--methods", "cchvae,fair_rl", "--epochs", "3", "--batch", "16",
         "--param", "fair_rl.reward=group_ee", "--out", str(tmp_path / "o"), "--quiet"]
    )  # fmt: skip
    assert code == 0
    assert seen["training"] == {"epochs": 3, "batch": 16}
    assert seen["subsample"] == 10_000
    assert seen["params"] == {"fair_rl": {"reward": "group_ee"}}


def test_bad_names_and_params_are_refused_before_any_run(tmp_path, capsys):
    out = tmp_path / "never"
    assert parse_methods("fair_rl/a,wachter") == ["fair_rl/a", "wachter"]
    for args, msg in (
        (["--methods", "fair_rl,magic"], "unknown method 'magic'"),
        (["--methods", "fair_rl", "--param", "fair_rl.reward=fairest"], "unknown reward"),
        (["--methods", "fair_rl", "--param", "gs.step=1"], "'gs' is not one of --methods"),
        (["--methods", "fair_rl", "--param", "fair_rl"], "expected METHOD.KEY=VALUE"),
    ):
        assert main(["experiment", *args, "--out", str(out), "--quiet"]) == 2
        assert msg in capsys.readouterr().err
        assert not out.exists()
