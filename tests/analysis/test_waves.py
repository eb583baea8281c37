"""The waves analysis (issue 34) on a synthetic multi-wave export made with the real engine
(`tests.analysis.waves_export`): the invalidation rate equals a recomputation written here
from the export's rows and the models reloaded by their recorded hash; fidelity counts are
the changes' own; bad input is named and nothing is written."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.__main__ import main
from analysis.report.inputs import read_input
from analysis.report.render import _environment
from analysis.report.waves import waves_records, waves_section
from analysis.waves import WavesError, analyse_waves, fidelity, invalidation, read_waves
from recourse_engine import carloan_schema, load_model
from recourse_engine.model_updates import model_hash
from tests.analysis.report.every_outcome import every_outcome_export
from tests.analysis.waves_export import make_waves_export

SCHEMA = carloan_schema()
X = [f"x_{k}" for k in SCHEMA.keys]
CF = [f"cf_{k}" for k in SCHEMA.keys]


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_waves_export(tmp_path_factory.mktemp("waves") / "export")


@pytest.fixture(scope="module")
def models(export: Path) -> dict:
    out = {p.stem: load_model(p, SCHEMA) for p in (export / "models").glob("*.joblib")}
    assert all(model_hash(m) == h for h, m in out.items())  # reloaded, still the same model
    return out


def _recomputed(export: Path, models: dict) -> dict[tuple[str, int], tuple[int, int]]:
    """(condition, wave) -> (fully implemented and valid when shown, of them rejected), from
    waves.csv's profiles, evaluations.csv's plans and the recorded models only."""
    w = pd.read_csv(export / "waves.csv", dtype={"participant": str, "followed_recourse": str})
    ev = pd.read_csv(export / "evaluations.csv", dtype={"recourse": str}).set_index("recourse")
    rows = {(r.participant, r.wave): r for r in w.itertuples()}
    out: dict[tuple[str, int], list[int]] = {}
    for (pid, wave), row in rows.items():
        x_now = np.array([getattr(row, c) for c in X], dtype=float)
        # the recorded decision is the recorded model's
        approved = bool(models[row.model_hash].approves(x_now[None, :])[0])
        assert approved == (row.decision == "approved")
        if wave == 1:
            continue
        counts = out.setdefault((row.condition, wave), [0, 0])
        prev = rows[(pid, wave - 1)]
        if not isinstance(prev.followed_recourse, str):
            continue
        cf = ev.loc[prev.followed_recourse, CF].to_numpy(dtype=float)
        x_prev = np.array([getattr(prev, c) for c in X], dtype=float)
        planned = cf != x_prev
        full = bool((x_now[planned] == cf[planned]).all())
        valid = bool(models[prev.model_hash].approves(cf[None, :])[0])
        if full and valid:
            counts[0] += 1
            counts[1] += row.decision == "rejected"
    return {k: (a, b) for k, (a, b) in out.items()}


def test_invalidation_rate_equals_a_recomputation_from_rows_and_models(export, models):
    expected = _recomputed(export, models)
    data = read_waves(export)
    for given in (None, models):  # assumed valid when shown, and checked with the models
        table = invalidation(data, given).set_index(["condition", "wave"])
        assert set(table.index) == set(expected)
        for key, (n, rejected) in expected.items():
            assert table.loc[key, "fully_implemented"] == n
            assert table.loc[key, "invalidated"] == rejected
            rate = table.loc[key, "invalidation_rate"]
            assert (np.isnan(rate) and n == 0) or rate == pytest.approx(rejected / n)
    # the frozen model never rejects a fully implemented plan; retraining does (can fail)
    assert sum(v[1] for (cond, _), v in expected.items() if cond == "frozen") == 0
    assert sum(v[1] for (cond, _), v in expected.items() if cond == "retrained") > 0


def test_fidelity_counts_are_the_changes_own(export):
    ch = pd.read_csv(export / "changes.csv", dtype={"participant": str})
    w = pd.read_csv(export / "waves.csv", dtype={"participant": str})
    ch = ch.merge(w[["participant", "wave", "condition"]], on=["participant", "wave"])
    table = fidelity(read_waves(export)).set_index(["condition", "wave"])
    for (cond, wave), g in ch.groupby(["condition", "wave"]):
        counts = {"followed": 0, "partial": 0, "other": 0}
        for r in g[g["planned"].notna()].itertuples():
            if r.after == r.planned:
                counts["followed"] += 1
            elif r.before < r.after < r.planned or r.planned < r.after < r.before:
                counts["partial"] += 1
            else:
                counts["other"] += 1
        for col, n in counts.items():
            assert table.loc[(cond, wave), col] == n
        unplanned = int((g["planned"].isna() & (g["after"] != g["before"])).sum())
        assert table.loc[(cond, wave), "unplanned_changes"] == unplanned
    assert table["partial"].sum() > 0 and table["unplanned_changes"].sum() > 0


def test_cli_writes_every_table_and_the_report_shows_them(export, tmp_path):
    out = tmp_path / "out"
    assert main(["waves", "--export", str(export), "--out", str(out)]) == 0
    names = {p.name for p in out.iterdir()}
    assert {f"waves_{t}.csv" for t in ("invalidation", "fidelity", "approvals")} <= names
    seg = pd.read_csv(out / "waves_segregation.csv")
    assert set(seg["wave"]) == {1, 2, 3} and set(seg["condition"]) == {"frozen", "retrained"}
    approvals = pd.read_csv(out / "waves_approvals.csv")
    assert set(approvals["grouping"]) == {"gender", "age_band"}
    # the report's section: present with waves.csv, on the report's participants
    result = waves_section(read_input(export))
    assert result is not None
    html = _environment().get_template("waves.html.j2").render(waves=waves_records(result))
    assert 'id="waves-invalidation-table"' in html and 'id="waves-gamm-note"' in html


def test_no_waves_section_without_waves_csv(tmp_path):
    assert waves_section(read_input(every_outcome_export(tmp_path / "eo"))) is None


def test_bad_exports_are_named_and_nothing_is_written(export, tmp_path, capsys):
    broken = tmp_path / "broken"
    shutil.copytree(export, broken, ignore=shutil.ignore_patterns("models"))
    w = pd.read_csv(broken / "waves.csv").drop(columns=["model_hash", "decision"])
    w.to_csv(broken / "waves.csv", index=False)
    out = tmp_path / "out"
    assert main(["waves", "--export", str(broken), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "waves.csv lacks the column(s) model_hash, decision" in err
    assert not out.exists()
    (broken / "waves.csv").unlink()
    with pytest.raises(WavesError, match="has no waves.csv .not a multi-wave"):
        analyse_waves(broken)
    shutil.copy(export / "waves.csv", broken / "waves.csv")
    ch = pd.read_csv(broken / "changes.csv", dtype=str, keep_default_na=False)
    ch.loc[3, "after"] = "seven"
    ch.to_csv(broken / "changes.csv", index=False)
    with pytest.raises(WavesError, match=r"changes.csv: row 4, column 'after': 'seven'"):
        read_waves(broken)
