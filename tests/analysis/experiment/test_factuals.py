"""The per-factual result file: its columns and every value against the method's own
output recomputed directly, and the run's summary as the mean of its columns."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.__main__ import main
from analysis.experiment.factuals import FACTUAL_COLUMNS
from analysis.experiment.run import run_once
from analysis.experiment.settings import ExperimentSettings
from recourse_engine import normalise
from recourse_engine.datasets import synthetic


def test_factual_rows_match_the_method_outputs():
    data = synthetic(4)
    st = ExperimentSettings(factual_cap=25, people_resamples=0)
    rows, out = run_once(data, ["ebr"], 4, settings=st)
    data = out["data"]  # the held-out rows: the population and its rejected factuals
    per = out["factuals"]["ebr"]
    res, model, rejected = out["ebr"], out["model"], out["rejected"]
    x, cf = data.codes[rejected], res.counterfactuals
    assert len(per) == int(rejected.sum())
    # rows of the loaded data set: the held-out rows' numbers
    assert per["row"].tolist() == out["split"]["test_rows"][np.flatnonzero(rejected)].tolist()
    assert per["group"].tolist() == data.group[rejected].tolist()
    found = ~np.isnan(cf).any(axis=1)
    assert per["found"].tolist() == found.tolist()
    approved = np.zeros(len(cf), dtype=bool)
    approved[found] = model.approves(cf[found])
    assert per["valid"].tolist() == approved.tolist()
    # synthetic items are numeric: distances are those of the normalised coordinates
    dz = normalise(data.schema, cf[found]) - normalise(data.schema, x[found])
    assert np.allclose(per["cost_l2"][found], np.linalg.norm(dz, axis=1))
    assert np.allclose(per["cost_l1"][found], np.abs(dz).sum(axis=1))
    assert np.allclose(per["cost_linf"][found], np.abs(dz).max(axis=1))
    assert per["sparsity"][found].tolist() == (cf[found] != x[found]).sum(axis=1).tolist()
    fixed = [i for i, it in enumerate(data.schema.items) if it.constraint == "fixed"]
    moved_fixed = (cf[found][:, fixed] != x[found][:, fixed]).sum(axis=1)
    assert per["constraint_violation"][found].tolist() == moved_fixed.tolist()
    # CARLA's costly metrics only for the first `factual_cap` factuals
    assert per["robustness_invalidation"][:25][found[:25]].notna().all()
    assert per["robustness_invalidation"][25:].isna().all()
    assert per["redundancy"][25:].isna().all()
    for i in np.flatnonzero(found[:25])[:5]:  # redundancy: changed items revertible alone
        changed = np.flatnonzero(cf[i] != x[i])
        keep = sum(
            bool(model.approves(np.where(np.arange(len(x[i])) == j, x[i], cf[i])[None, :])[0])
            for j in changed
        )
        assert per["redundancy"][i] == keep
    # the run's summary metrics are the means of these columns
    summary = {r["metric"]: r["value"] for r in rows if r["method"] == "ebr"}
    assert summary["cost"] == pytest.approx(per["cost_l2"].mean())
    assert summary["robustness_invalidation"] == pytest.approx(
        per["robustness_invalidation"].mean()
    )
    assert summary["constraint_violation"] == pytest.approx(per["constraint_violation"].mean())
    assert summary["sparsity"] == pytest.approx(per["sparsity"].mean())


def test_command_writes_one_row_per_run_method_and_factual(tmp_path):
    out = tmp_path / "f"
    argv = ["experiment", "--methods", "wachter,gs", "--runs", "2", "--factual-cap", "10"]
    assert main([*argv, "--people-resamples", "0", "--out", str(out), "--quiet"]) == 0
    facts = pd.read_csv(out / "factuals.csv")
    assert tuple(facts.columns) == FACTUAL_COLUMNS
    assert not facts.duplicated(["run", "method", "factual"]).any()
    runs = pd.read_csv(out / "runs.csv")
    for (r, m), part in facts.groupby(["run", "method"]):
        fr = runs[(runs["run"] == r) & (runs["method"] == m)].set_index("metric")["value"]
        assert fr["failure_rate"] == pytest.approx(1 - part["valid"].mean())
        assert part["redundancy"].iloc[10:].isna().all()
    res = pd.read_csv(out / "results.csv")
    assert set(res.dropna(subset=["interval"])["interval"]) == {"t over 2 runs"}


def test_bad_people_resamples_and_cap_are_refused(tmp_path, capsys):
    for flag, value in (("--people-resamples", "1"), ("--factual-cap", "0")):
        out = tmp_path / flag.strip("-")
        try:
            status = main(["experiment", flag, value, "--out", str(out), "--quiet"])
        except SystemExit as exc:  # argparse's own check
            status = exc.code
        assert status == 2
        assert not out.exists()
        assert flag.strip("-").split("-")[0] in capsys.readouterr().err
