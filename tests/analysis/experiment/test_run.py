"""The seed paper's central finding on its synthetic data, and the experiment command."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analysis.__main__ import main
from analysis.experiment.run import (
    invalidation,
    metrics,
    run_experiment,
    run_once,
    summarise,
    train_decision_model,
)
from recourse_engine.datasets import synthetic
from recourse_engine.methods import get_method
from recourse_engine.metrics import failure_rate

#: torch on one thread (tests/conftest.py): the cores are shared
pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def synth():
    """The synthetic data and the experiment's own decision model (a logistic regression)."""
    data = synthetic(seed=3)
    return data, train_decision_model(data, 3)


#: training as short as the finding allows (the CLI trains longer by default)
_SHORT = {"epochs": 30, "batch": 128}
PARAMS = {"cchvae": _SHORT, "ibr": _SHORT, "cruds": _SHORT}


@pytest.mark.slow
def test_balanced_recourse_desegregates_and_realistic_recourse_does_not(tmp_path):
    methods = ["ebr", "ibr", "cchvae", "cruds"]
    summary = run_experiment("synthetic", methods, 5, tmp_path, progress=False, params=PARAMS)
    mean = summary.set_index(["method", "metric"])["mean"]
    origin = {k: mean["origin", k] for k in ("centralization", "atkinson", "avg_proximity")}
    for m in ("ebr", "ibr"):  # every index better than Origin on average
        assert mean[m, "centralization"] < origin["centralization"], m
        assert mean[m, "atkinson"] < origin["atkinson"], m
        assert mean[m, "avg_proximity"] > origin["avg_proximity"], m
    for m in ("cchvae", "cruds"):  # at least one index worse than Origin on average
        worse = (
            mean[m, "centralization"] > origin["centralization"],
            mean[m, "atkinson"] > origin["atkinson"],
            mean[m, "avg_proximity"] < origin["avg_proximity"],
        )
        assert any(worse), m
    for m in methods:
        assert mean[m, "failure_rate"] == 0.0, m
    files = {p.name for p in tmp_path.iterdir()}
    assert {"results.csv", "results.md", "figure.png"} <= files
    csv = pd.read_csv(tmp_path / "results.csv")
    assert list(csv.columns)[:4] == ["method", "metric", "mean", "sd"]
    assert {"diff_mean", "diff_lo", "diff_hi", "worse_runs"} <= set(csv.columns)
    assert set(csv["method"]) == {"origin", *methods}


def test_run_once_replaces_exactly_the_recoursed_factuals():
    data = synthetic(seed=8)
    rows, out = run_once(data, ["gs"], seed=8, params={"gs": {}})
    data = out["data"]  # the held-out rows: the population and its rejected factuals
    res = out["gs"]
    assert res.valid.all()
    frame = pd.DataFrame(rows)
    got = frame.set_index(["method", "metric"])["value"]
    # recompute the costs directly
    cost = np.linalg.norm(res.counterfactuals[:, :2] - res.factuals[:, :2], axis=1)
    assert got["gs", "cost"] == pytest.approx(cost.mean())
    g = data.group[out["rejected"]]
    gap = abs(cost[g == 0].mean() - cost[g == 1].mean())
    assert got["gs", "cost_gap"] == pytest.approx(gap)
    assert got["gs", "failure_rate"] == 0.0
    assert set(frame["metric"]) <= set(metrics())
    # the run's wall time is the fit plus generating every factual's counterfactual
    assert got["gs", "wall_seconds"] == pytest.approx(got["gs", "fit_seconds"] + res.seconds)
    assert got["gs", "cf_per_second"] == pytest.approx(len(res.factuals) / res.seconds)


def test_invalidation_matches_the_engine_metric(synth):
    data, model = synth
    x = data.codes[~model.approves(data.codes)][:30]
    res = get_method("gs", seed=0).fit(data, model).get_counterfactuals(x)
    cf = res.counterfactuals.copy()
    cf[:5] = x[:5]  # rejected profiles: not approved
    cf[5:8] = np.nan  # none found
    assert invalidation(cf, model) == pytest.approx(failure_rate(cf, model))
    assert invalidation(cf, model) == pytest.approx(8 / 30)


def test_summary_has_mean_and_sample_sd():
    rows = [{"method": "a", "metric": "cost", "value": v} for v in (1.0, 2.0, 4.0)]
    s = summarise(rows)
    assert s.loc[0, "mean"] == pytest.approx(7 / 3)
    assert s.loc[0, "sd"] == pytest.approx(
        math.sqrt(((1 - 7 / 3) ** 2 + (2 - 7 / 3) ** 2 + (4 - 7 / 3) ** 2) / 2)
    )


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--methods", "ebr,magic"], "unknown method 'magic'"),
        (["--methods", "ebr,,gs"], "separated by commas"),
        (["--methods", "gs,gs"], "named twice"),
        (["--dataset", "mnist"], "unknown dataset 'mnist'"),
    ],
)
def test_experiment_cli_refuses_bad_input_and_writes_nothing(tmp_path, capsys, argv, message):
    out = tmp_path / "out"
    code = main(["experiment", "--out", str(out), "--quiet", *argv])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
    assert not out.exists()


def test_experiment_cli_bad_numbers_and_paths(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["experiment", "--out", str(tmp_path / "o"), "--runs", "0"])
    assert exc.value.code == 2
    assert main(["experiment", "--out", str(tmp_path / "missing" / "o")]) == 2
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "file").write_text("x")
    assert main(["experiment", "--out", str(tmp_path / "file")]) == 2
    assert "not a folder" in capsys.readouterr().err


def test_experiment_cli_writes_the_table(tmp_path, capsys):
    out = tmp_path / "o"
    code = main(["experiment", "--methods", "gs", "--runs", "2", "--out", str(out), "--quiet"])
    assert code == 0
    csv = pd.read_csv(out / "results.csv")
    assert set(csv["method"]) == {"origin", "gs"}
    assert csv["sd"].notna().all()
    assert "| centralization |" in (out / "results.md").read_text()
