"""The paired differences' statistics against R (`make_paired_fixture.R` beside this file
wrote `fixtures/paired_reference.csv`: `t.test`'s 95% interval and p-value, `p.adjust`'s
Holm), Holm's step-down written out, and hand-made cases for the verdicts, the people
bootstrap's p-value and centralization's change in people."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.experiment.paired import holm, interval, paired_frame, paired_table, t_pvalue
from analysis.experiment.people import people_pvalue

REF = pd.read_csv(Path(__file__).parent / "fixtures" / "paired_reference.csv")


def _values(text: str) -> np.ndarray:
    return np.array([float(v) for v in text.split(";")])


def test_t_interval_and_p_value_equal_r_t_test():
    for row in REF.itertuples(index=False):
        x = _values(row.values)
        lo, hi, how = interval(x)
        assert (lo, hi) == pytest.approx((row.lo, row.hi), rel=1e-9, abs=1e-15)
        assert how == f"t over {row.n} runs"
        assert t_pvalue(x) == pytest.approx(row.p, rel=1e-9)


def test_holm_equals_r_p_adjust():
    assert holm(REF["p"].to_numpy()) == pytest.approx(REF["p_holm"].to_numpy(), rel=1e-12)


def _holm_slow(p: list[float]) -> list[float]:
    """Holm (1979) step-down: the k-th smallest p times (m − k + 1), running maximum, cap 1."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 0.0
    for k, i in enumerate(order):
        running = max(running, min(1.0, (m - k) * p[i]))
        out[i] = running
    return out


def _runs(columns: dict[tuple[str, str], np.ndarray]) -> pd.DataFrame:
    rows = []
    for (method, metric), d in columns.items():
        for r, v in enumerate(d):
            rows.append(
                {"run": r, "method": method, "metric": metric, "value": v, "before": 0.0, "diff": v}
            )
    return pd.DataFrame(rows)


def test_table_verdicts_are_holm_controlled():
    ten = {k: _values(v) for k, v in zip(REF["column"], REF["values"], strict=True)}
    cols = {
        ("x", "centralization"): ten["a"],  # p 1e-7: worse after Holm
        ("x", "atkinson"): ten["b"],  # p 0.044: interval below 0, Holm p 0.18
        ("x", "avg_proximity"): ten["c"],
        ("y", "centralization"): ten["f"],
        ("y", "atkinson"): -ten["a"],
        ("y", "avg_proximity"): ten["f"][::-1],
    }
    res = paired_frame(_runs(cols)).set_index(["method", "metric"])
    expected = _holm_slow([t_pvalue(d) for d in cols.values()])
    assert res["p_holm"].to_numpy() == pytest.approx(expected, rel=1e-12)
    assert res.loc[("x", "centralization"), "verdict"] == "worse"
    assert res.loc[("x", "atkinson"), "verdict_95"] == "better"  # unadjusted: excludes 0
    assert res.loc[("x", "atkinson"), "verdict"] == "no clear change"  # not after Holm
    assert res.loc[("y", "atkinson"), "verdict"] == "better"
    text = paired_table(res.reset_index(), 10)
    assert "Holm-adjusted" in text and "across the 6 intervals" in text


def test_centralization_change_in_people():
    d = np.array([0.01, 0.02, 0.03])
    runs = _runs({("m", "centralization"): d, ("m", "atkinson"): d})
    res = paired_frame(runs, minority={0: 100, 1: 200, 2: 50}).set_index("metric")
    # net minority members who became central: 1, 4 and 1.5 per run
    assert res.loc["centralization", "people_mean"] == pytest.approx((1 + 4 + 1.5) / 3)
    lo, hi, _ = interval(np.array([1.0, 4.0, 1.5]))
    got = (res.loc["centralization", "people_lo"], res.loc["centralization", "people_hi"])
    assert got == pytest.approx((lo, hi))
    assert np.isnan(res.loc["atkinson", "people_mean"])  # no count of people for Atkinson


def test_people_bootstrap_p_value_by_hand():
    # 9 resampled means: 2 at or below 0, 7 above: p = 2 · (2 + 1) / (9 + 1)
    means = np.array([-0.2, 0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7])
    assert people_pvalue(means) == pytest.approx(0.6)
    assert people_pvalue(np.full(199, 0.3)) == pytest.approx(2 / 200)  # never below 2/(B+1)
    assert people_pvalue(np.zeros(5)) == 1.0


def test_identical_runs():
    assert t_pvalue(np.zeros(4)) == 1.0 and t_pvalue(np.full(4, 0.1)) == 0.0
    assert interval(np.zeros(4))[:2] == (0.0, 0.0)
    assert np.isnan(t_pvalue(np.array([0.3])))


def test_holm_leaves_nan_out_of_the_family():
    got = holm(np.array([0.01, np.nan, 0.04, 0.03]))
    assert np.isnan(got[1])
    assert got[[0, 2, 3]] == pytest.approx(_holm_slow([0.01, 0.04, 0.03]))


def test_report_gives_centralization_in_people_of_each_runs_minority(tmp_path):
    import json

    from analysis.experiment.report import setting_paired
    from analysis.experiment.space import training_split
    from recourse_engine.datasets import load_dataset

    seeds = [5, 6, 7]
    d = np.array([0.02, -0.01, 0.04])
    runs = _runs({("m", "centralization"): d, ("m", "atkinson"): d})
    runs["seed"] = runs["run"].map(dict(enumerate(seeds)))
    runs.to_csv(tmp_path / "runs.csv", index=False)
    settings = {"population": "train", "train_share": 0.75}  # groups of unequal size
    meta = {"dataset": "synthetic", "subsample": None, "settings": settings}
    (tmp_path / "settings.json").write_text(json.dumps(meta))
    got = setting_paired(tmp_path).set_index("metric").loc["centralization", "people_mean"]
    sizes = []
    for s in seeds:  # the minority: the smaller group of the run's population
        data = training_split(load_dataset("synthetic", seed=s), 0.75, s)
        _, counts = np.unique(data.group, return_counts=True)
        sizes.append(counts.min())
    assert len(set(sizes)) > 1  # the sizes differ by run, so the run's own size is used
    assert got == pytest.approx(np.mean(d * np.array(sizes)))


def test_people_are_counted_in_the_held_out_population_that_was_scored(tmp_path):
    """Under held-out scoring the indices are those of the held-out part; the minority that
    turns a share into people is that part's, as recorded in split.csv, not the whole data's."""
    import pandas as pd

    from analysis.experiment.report import setting_paired
    from analysis.experiment.run import run_experiment
    from analysis.experiment.settings import ExperimentSettings
    from recourse_engine.datasets import load_dataset

    out = tmp_path / "out"
    st = ExperimentSettings(holdout=0.25, people_resamples=0, fair_audits=False)
    run_experiment("synthetic", ["wachter"], 2, out, progress=False, settings=st)
    runs = pd.read_csv(out / "runs.csv")
    split = pd.read_csv(out / "split.csv")
    sizes = []
    for r, seed in runs[["run", "seed"]].drop_duplicates().to_numpy():
        group = load_dataset("synthetic", seed=int(seed)).group
        held = group[split.loc[split["run"] == r, "heldout_row"].to_numpy()]
        _, counts = np.unique(held, return_counts=True)
        sizes.append(counts.min())
    whole = min(np.unique(load_dataset("synthetic", seed=0).group, return_counts=True)[1])
    assert max(sizes) < whole  # a quarter of the rows: the whole data's minority is wrong
    d = runs[(runs["method"] == "wachter") & (runs["metric"] == "centralization")]
    got = setting_paired(out).set_index("metric").loc["centralization", "people_mean"]
    assert got == pytest.approx(np.mean(d["diff"].to_numpy() * np.array(sizes)))


@pytest.mark.parametrize(("resamples", "warned"), [(200, True), (2000, False)])
def test_the_caption_says_when_people_resamples_are_too_few_for_holm(resamples, warned):
    """Two runs, three indices of two methods (6 intervals): every resampled change above 0,
    so p is the bootstrap's floor 2/(B + 1); Holm's first step needs it below 0.05/6."""
    from analysis.experiment.paired import adjustment_note
    from analysis.segregation.catalogue import names

    cols = {(m, k): np.array([0.01, 0.02]) for m in ("a", "b") for k in names()}
    people = {m: [np.full((resamples, len(names())), 0.01)] * 2 for m in ("a", "b")}
    res = paired_frame(_runs(cols), people)
    assert res["p"].to_numpy() == pytest.approx(np.full(6, 2 / (resamples + 1)))
    assert ((res["verdict"] == "no clear change") == warned).all()
    note = adjustment_note(res)
    assert ("too coarse for Holm across 6" in note) == warned
    if warned:
        assert "--people-resamples 240 or more" in note  # 2·6/0.05 = 240: 12/241 < 0.05
