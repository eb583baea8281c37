"""The R hand-off (`analysis.r_export`, `recourse-analysis to-r`): labelled .rds / .sav files of
the platform's own export, and `analysis.R` run by Debian's R with mgcv, whose estimates must
equal `analysis.gamm`'s on the same evaluations within the tolerances of the mgcv-agreement
tests (tests/analysis/gamm/test_mgcv_agreement.py).

The export is `examples/data/demo_export/`, made by `examples/data/make_demo_export.sh` (the README's method-comparison
commands: 60 simulated participants)."""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from analysis.export import load_export
from analysis.gamm import fit_gamm
from analysis.r_export import R_FILES, parse_labels, write_r_data
from tests.run_cli import run_analysis
from tests.services import services_required

EXPORT = Path(__file__).resolve().parents[3] / "examples" / "data" / "demo_export"
LIKERT = ["Strongly no", "No", "Slightly no", "Neutral", "Slightly yes", "Yes", "Strongly yes"]


@pytest.fixture(scope="module")
def r_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("r") / "r-data"
    write_r_data(EXPORT, out)
    return out


def test_the_files_and_factor_labels_of_the_rds(r_dir):
    import pyreadr

    assert sorted(p.name for p in r_dir.iterdir()) == sorted(R_FILES)
    rds = pyreadr.read_r(r_dir / "evaluations.rds")[None]
    raw = pd.read_csv(EXPORT / "evaluations.csv")
    assert len(rds) == len(raw)
    for col in ("acceptance", "action"):
        assert list(rds[col].cat.categories) == LIKERT
        # level number = the export's code, row by row
        assert (rds[col].cat.codes.to_numpy() + 1 == raw[col].to_numpy()).all()
    book = pd.read_csv(EXPORT / "codebook.csv", keep_default_na=False)
    allowed = book.set_index(["file", "column"]).loc[("evaluations.csv", "x_education"), "allowed"]
    labels = [part.split("=", 1)[1].strip() for part in allowed.split(";")]
    assert list(rds["x_education"].cat.categories) == labels
    assert (rds["x_education"].cat.codes.to_numpy() + 1 == raw["x_education"].to_numpy()).all()
    # not 1..n (0=no; 1=yes): left as numbers; free text left as text
    assert pd.api.types.is_numeric_dtype(rds["any_impossible"])
    assert rds["strategy"].tolist() == raw["strategy"].tolist()


def test_the_sav_has_value_and_variable_labels(r_dir):
    import pyreadstat

    frame, meta = pyreadstat.read_sav(r_dir / "evaluations.sav")
    raw = pd.read_csv(EXPORT / "evaluations.csv")
    assert frame["acceptance"].tolist() == raw["acceptance"].astype(float).tolist()
    labels = meta.variable_value_labels["acceptance"]
    assert [labels[float(k)] for k in range(1, 8)] == LIKERT
    assert meta.variable_value_labels["any_impossible"] == {0.0: "no", 1.0: "yes"}
    described = dict(zip(meta.column_names, meta.column_labels, strict=True))
    assert described["sparsity"] == "number of changed items (L0)"


def test_parse_labels_takes_only_code_label_lists():
    assert parse_labels("1=No; 2=Yes") == {1: "No", 2: "Yes"}
    assert parse_labels("0..d") is None and parse_labels(">=0") is None
    assert parse_labels("1=No; maybe") is None and parse_labels("") is None


def test_to_r_reads_the_zip_as_the_folder_and_refuses_bad_input(tmp_path):
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for p in EXPORT.iterdir():
            zf.write(p, f"comparison/{p.name}")
    r = run_analysis("to-r", "--export", str(archive), "--out", str(tmp_path / "z"))
    assert r.returncode == 0, r.stderr
    a = (tmp_path / "z" / "evaluations.sav").read_bytes()
    write_r_data(EXPORT, tmp_path / "f")
    assert len(a) == len((tmp_path / "f" / "evaluations.sav").read_bytes())
    bad = run_analysis("to-r", "--export", str(tmp_path / "none"), "--out", str(tmp_path / "x"))
    assert bad.returncode == 2
    assert bad.stderr == f"error: {tmp_path / 'none'}: no such file or folder\n"
    assert not (tmp_path / "x").exists()


def _require_mgcv() -> None:
    reason = None
    if shutil.which("Rscript") is None:
        reason = "Rscript not found (Debian: apt-get install r-base-core r-cran-mgcv)"
    else:
        probe = subprocess.run(
            ["Rscript", "-e", "library(mgcv)"], capture_output=True, text=True, check=False
        )
        if probe.returncode != 0:
            reason = "R's mgcv is not installed (Debian: apt-get install r-cran-mgcv)"
    if reason is None:
        return
    if services_required():
        pytest.fail(f"required for the R round trip (RECOURSE_REQUIRE_SERVICES=1): {reason}")
    pytest.skip(reason)


def _python_fits(kept: pd.DataFrame) -> dict[str, object]:
    def k(col: str) -> int:
        return min(10, kept[col].nunique())

    fits = {}
    i = 0
    for outcome in ("acceptance", "action"):
        for distance in ("sparsity", "proximity"):
            i += 1
            fits[f"Model-{i}"] = fit_gamm(kept, outcome, distance, "participant", "tp", k(distance))
    for outcome in ("acceptance", "action"):
        formula = (
            f"{outcome} ~ strategy + s(proximity, k = {k('proximity')}) + s(participant, bs = 're')"
        )
        fits[f"contrasts-{outcome}"] = fit_gamm(formula, kept)
    return fits


def test_analysis_R_refits_the_models_as_analysis_gamm(r_dir, tmp_path):
    _require_mgcv()
    out = tmp_path / "mgcv.csv"
    run = subprocess.run(
        ["Rscript", str(r_dir / "analysis.R"), str(r_dir), str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    mgcv = pd.read_csv(out)
    kept = load_export(EXPORT).kept_evaluations()
    fits = _python_fits(kept)
    assert sorted(mgcv["model"].unique()) == sorted(fits)
    for model, fit in fits.items():
        rows = mgcv.loc[mgcv["model"] == model].set_index("term")
        assert int(rows["n"].iloc[0]) == fit.n == len(kept), model
        assert fit.aic == pytest.approx(rows["aic"].iloc[0], rel=0.002), model
        assert fit.scale == pytest.approx(rows["scale"].iloc[0], rel=0.01), model
        par = rows.loc[rows["type"] == "parametric"]
        assert sorted(par.index) == sorted(fit.parametric), model
        for term, r in par.iterrows():
            ours = fit.parametric[term]
            assert ours["estimate"] == pytest.approx(r["estimate"], rel=0.01, abs=0.01), term
            assert ours["se"] == pytest.approx(r["std_error"], rel=0.02), term
        smo = rows.loc[rows["type"] == "smooth"]
        assert sorted(smo.index) == sorted(fit.smooth), model
        for term, r in smo.iterrows():
            ours = fit.smooth[term]
            assert ours.edf == pytest.approx(r["edf"], rel=0.01, abs=0.05), (model, term)
            if r["edf"] > 0.5:  # a penalised-away term's F is 0 / 0 in both
                assert pytest.approx(r["statistic"], rel=0.03) == ours.F, (model, term)
            # as test_mgcv_agreement: the same verdict at 5%, and p itself where above 0.001
            assert (ours.p < 0.05) == (r["p_value"] < 0.05), (model, term)
            if r["p_value"] > 0.001:
                assert ours.p == pytest.approx(r["p_value"], rel=0.10), (model, term)
