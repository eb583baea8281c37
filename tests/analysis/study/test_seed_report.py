"""`python -m analysis study`: drops impossible evaluations, fits the four models, writes Table S2
(CSV/MD/LaTeX), Figure 3 (PNG/SVG) and models.json; bad exports exit 2 and write nothing."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.gamm import fit_gamm
from tests.run_cli import run_analysis

FIXTURES = Path(__file__).parents[1] / "gamm" / "fixtures"


def _export(folder: Path, n_participants: int = 80) -> pd.DataFrame:
    """A study export built from the committed steep-study simulation plus impossible rows."""
    study = pd.read_csv(FIXTURES / "study_null.csv", dtype={"participant": str})
    ids = study["participant"].unique()[:n_participants]
    ev = study[study["participant"].isin(ids)].copy().reset_index(drop=True)
    ev["recourse"] = [f"r{i}" for i in range(len(ev))]
    ev["strategy"] = np.where(ev["position"] <= 2, "sparsest", "random")
    ev["any_impossible"] = 0
    extra = ev.iloc[:7].copy()
    extra["recourse"] = [f"imp{i}" for i in range(len(extra))]
    extra["any_impossible"] = 1
    extra["acceptance"] = 7
    extra["sparsity"] = 40.0  # would dominate the fits if it were kept
    full = pd.concat([ev, extra], ignore_index=True)
    folder.mkdir(parents=True, exist_ok=True)
    full.to_csv(folder / "evaluations.csv", index=False)
    pd.DataFrame({"participant": ids}).to_csv(folder / "participants.csv", index=False)
    return ev


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    base = tmp_path_factory.mktemp("study")
    kept = _export(base / "export")
    r = run_analysis("study", "--export", str(base / "export"), "--out", str(base / "report"))
    return r, base / "report", kept


def test_writes_all_files(report):
    r, out, _ = report
    assert r.returncode == 0, r.stderr
    for name in (
        "table_s2.csv",
        "table_s2.md",
        "table_s2.tex",
        "figure3.png",
        "figure3.svg",
        "models.json",
    ):
        assert (out / name).stat().st_size > 0, name
    assert (out / "figure3.png").read_bytes()[:4] == b"\x89PNG"
    assert "<svg" in (out / "figure3.svg").read_text()[:500]
    assert "GAMMs" not in r.stderr  # off a terminal, no progress bar (tqdm's own switch)


def test_table_s2_matches_direct_fits(report):
    _, out, kept = report
    table = pd.read_csv(out / "table_s2.csv")
    assert list(table["Model"].unique()) == ["Model-1", "Model-2", "Model-3", "Model-4"]
    assert len(table) == 16
    models = json.loads((out / "models.json").read_text())
    assert models["n_evaluations"] == len(kept) and models["n_dropped_impossible"] == 7
    # Model-3 is action ~ s(sparsity): refit on the kept rows directly
    fit = fit_gamm(kept, "action", "sparsity", "participant")
    rows = table[table["Model"] == "Model-3"].set_index("Variable")
    assert rows.loc["Intercept", "Coef."] == pytest.approx(
        fit.parametric["(Intercept)"]["estimate"]
    )
    assert rows.loc["Intercept", "AIC"] == pytest.approx(fit.aic)
    assert rows.loc["Sparsity", "EDF"] == pytest.approx(fit.smooth["s(sparsity)"].edf)
    assert rows.loc["uid (r.s.)", "F value"] == pytest.approx(
        fit.smooth["s(participant,sparsity)"].F
    )
    md = (out / "table_s2.md").read_text()
    assert md.count("\n") == 18 and "| Model-1 |" in md
    tex = (out / "table_s2.tex").read_text()
    assert tex.startswith("\\begin{tabular}") and tex.count("\\\\") == 17


def test_ordinal_robustness_reported(report):
    _, out, _ = report
    ordinal = json.loads((out / "models.json").read_text())["ordinal"]
    assert set(ordinal) == {"Model-1", "Model-2", "Model-3", "Model-4"}
    for row in ordinal.values():
        assert row["same_conclusion"] == (
            (row["gaussian"]["p"] < 0.05) == (row["ordinal"]["p"] < 0.05)
            and (
                row["gaussian"]["p"] >= 0.05
                or row["gaussian"]["direction"] == row["ordinal"]["direction"]
            )
        )
        assert row["note"]
        assert row["ordinal"]["converged"]


def test_fixed_effects_gam_beside(report):
    _, out, _ = report
    fixed = json.loads((out / "models.json").read_text())["fixed_effects_gam"]
    assert set(fixed) == {"Model-1", "Model-2", "Model-3", "Model-4"}
    for row in fixed.values():
        assert row["edf"] > 0.9 and 0 <= row["p"] <= 1
        assert np.all(np.asarray(row["grid"]["lower"]) <= np.asarray(row["grid"]["fit"]) + 1e-9)
    assert "pygam" in (out / "figure3.svg").read_text()


def test_bad_export_exits_2_and_writes_nothing(tmp_path):
    _export(tmp_path / "export", n_participants=10)
    ev = pd.read_csv(tmp_path / "export" / "evaluations.csv")
    ev.loc[3, "action"] = 9
    ev.to_csv(tmp_path / "export" / "evaluations.csv", index=False)
    r = run_analysis(
        "study", "--export", str(tmp_path / "export"), "--out", str(tmp_path / "report")
    )
    assert r.returncode == 2
    assert "row 4" in r.stderr and "action" in r.stderr and r.stderr.count("\n") == 1
    assert not (tmp_path / "report").exists()
    r = run_analysis(
        "study", "--export", str(tmp_path / "nothing"), "--out", str(tmp_path / "report")
    )
    assert r.returncode == 2 and not (tmp_path / "report").exists()


def test_model_that_cannot_be_fitted_is_named(tmp_path, capsys):
    from analysis.__main__ import main

    _export(tmp_path / "export", n_participants=10)
    ev = pd.read_csv(tmp_path / "export" / "evaluations.csv")
    ev["sparsity"] = 2.0
    ev.to_csv(tmp_path / "export" / "evaluations.csv", index=False)
    code = main(
        [
            "study",
            "--export",
            str(tmp_path / "export"),
            "--out",
            str(tmp_path / "out"),
            "--no-progress",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "Model-1 (acceptance ~ s(sparsity))" in err and "constant" in err
    assert not (tmp_path / "out").exists()
