"""The level tables of docs/methods.md are what `level_tables` makes of their committed run
files (docs/evidence/levels/NAME): a number edited in the docs, or a run file changed,
fails here. The statistics of the conditioning table are checked against scipy and
statsmodels on hand-made runs, and each printed command parses back to its recorded
arguments."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from analysis.experiment.level_tables import (
    TITLES,
    command,
    conditioning_frame,
    conditioning_table,
    dataset_block,
    wall_times,
)

ROOT = Path(__file__).resolve().parents[3]
EVIDENCE = ROOT / "docs" / "evidence" / "levels"
DOCS = ROOT / "docs" / "methods.md"


@pytest.fixture(scope="module")
def docs() -> str:
    return DOCS.read_text()


@pytest.fixture(scope="module")
def times() -> dict[str, str]:
    return wall_times((EVIDENCE / "times.txt").read_text())


@pytest.mark.parametrize("name", list(TITLES))
def test_each_data_sets_block_is_rewritten_from_its_run_files(name, docs, times):
    block = dataset_block(name, EVIDENCE / name, times.get(name))
    assert block.rstrip() in docs


def test_the_conditioning_table_is_rewritten_from_the_run_files(docs):
    folders = {n: EVIDENCE / n for n in TITLES}
    assert conditioning_table(conditioning_frame(folders)).rstrip() in docs


def test_the_command_writes_every_block_and_refuses_a_missing_folder(tmp_path, times, capsys):
    import shutil

    from analysis.experiment.level_tables import main

    out = tmp_path / "levels"
    shutil.copytree(EVIDENCE, out)
    assert main([str(out)]) == 0
    page = (out / "levels.md").read_text()
    for name in TITLES:
        assert dataset_block(name, EVIDENCE / name, times.get(name)) in page
    assert main([str(tmp_path / "nowhere")]) == 2
    assert "usage:" in capsys.readouterr().err


@pytest.mark.parametrize("name", list(TITLES))
def test_the_printed_command_parses_back_to_the_recorded_arguments(name):
    from analysis.__main__ import build_parser

    meta = json.loads((EVIDENCE / name / "settings.json").read_text())
    line = command(meta)
    words = shlex.split(line)
    assert words[:4] == ["python", "-m", "analysis", "experiment"]
    got = vars(build_parser().parse_args([*words[3:], "--out", "X", "--no-progress"]))
    want = dict(meta["arguments"], out=got["out"])
    assert {k: got[k] for k in want} == want


def _runs(values: dict[tuple[str, str], list[float]]) -> pd.DataFrame:
    rows = []
    for (method, metric), vals in values.items():
        rows += [
            {"run": r, "seed": r, "method": method, "metric": metric, "value": v}
            for r, v in enumerate(vals)
        ]
    return pd.DataFrame(rows)


def test_conditioning_differences_t_intervals_and_holm_by_hand(tmp_path):
    a = {
        ("ebr", "centralization"): [0.30, 0.32, 0.35, 0.31, 0.36],
        ("ebr/uncond", "centralization"): [0.20, 0.25, 0.24, 0.22, 0.21],
        ("ebr", "atkinson"): [0.1, 0.2, 0.3, 0.2, 0.1],
        ("ebr/uncond", "atkinson"): [0.1, 0.2, 0.3, 0.2, 0.1],  # identical every run
    }
    b = {
        ("ebr", "centralization"): [0.5, 0.4, 0.6],
        ("ebr/uncond", "centralization"): [0.45, 0.47, 0.5],
        ("ebr", "atkinson"): [0.2, 0.3, 0.1],
        ("ebr/uncond", "atkinson"): [0.25, 0.2, 0.2],
    }
    folders = {}
    for name, values in (("german", a), ("law_sex", b)):
        folders[name] = tmp_path / name
        folders[name].mkdir()
        frame = _runs(values)
        rest = [  # the other metrics the table reads, equal for both: difference 0
            {"run": r, "seed": r, "method": m, "metric": k, "value": 1.0}
            for r in range(len(next(iter(values.values()))))
            for m in ("ebr", "ebr/uncond")
            for k in ("avg_proximity", "cost", "cost_gap", "ynn", "failure_rate")
        ]
        pd.concat([frame, pd.DataFrame(rest)]).to_csv(folders[name] / "runs.csv", index=False)
    got = conditioning_frame(folders).set_index(["dataset", "metric"])
    for name, values in (("german", a), ("law_sex", b)):
        for metric in ("centralization", "atkinson"):
            d = np.array(values[("ebr", metric)]) - np.array(values[("ebr/uncond", metric)])
            row = got.loc[(name, metric)]
            assert row["mean"] == pytest.approx(d.mean())
            assert row["positive"] == int((d > 0).sum())
            if np.ptp(d) == 0:  # identical in every run: no test, out of the family
                assert np.isnan(row["p"]) and row["zero"] == len(d)
            else:
                half = stats.t.ppf(0.975, len(d) - 1) * stats.sem(d)
                assert (row["lo"], row["hi"]) == pytest.approx((d.mean() - half, d.mean() + half))
                assert row["p"] == pytest.approx(stats.ttest_1samp(d, 0).pvalue)
    tested = got[got["p"].notna()]
    assert len(tested) == 3  # german's atkinson and the other metrics (all equal) left out
    want = multipletests(tested["p"].to_numpy(), method="holm")[1]
    assert tested["p_holm"].to_numpy() == pytest.approx(want)
    table = conditioning_table(got.reset_index())
    assert "0 (identical in every run)" in table
    assert "across the 3 cells of the table that differ" in table
