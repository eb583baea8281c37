"""The registered analysis (`recourse-analysis registered`): a bundle the study side wrote is
run on the bot-made demo export and gives the unregistered commands' tables byte for byte;
its models_run.txt joins the study side's deviation report; a tampered bundle, an unknown
exclusion rule and an export without a registered outcome are refused, nothing written."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from django.core.management import call_command

from analysis.__main__ import main
from analysis.export import load_export
from analysis.gamm import fit_gamm
from analysis.study.registered import seed_formula
from studyapp.definition import study_file as sf
from studyapp.prereg import bundle, deviations
from tests.studyapp.conftest import make_study

DEMO = Path(__file__).resolve().parents[3] / "examples" / "data" / "demo_export"
TABLES = ("table_s2.csv", "table_s2.md", "table_s2.tex", "models.json")


def _rewrite_evaluations(src: Path, dst: Path, rows: Any = None, drop: str = "") -> None:
    """A copy of the export `src` at `dst` whose evaluations.csv keeps only the rows (dicts)
    `rows` is true for, or lacks the column `drop`."""
    shutil.copytree(src, dst)
    path = dst / "evaluations.csv"
    with path.open(newline="", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    columns = [c for c in table[0] if c != drop]
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        w.writeheader()
        w.writerows(r for r in table if rows is None or rows(r))


def test_the_registered_run_gives_the_commands_tables(db: Any, tmp_path: Path) -> None:
    study = make_study(slug="regrun", state="draft")
    call_command(
        "study", "register", "regrun", "--out", str(tmp_path / "reg"), stdout=io.StringIO()
    )
    reg = tmp_path / "reg" / "registration.json"
    out = tmp_path / "registered"
    assert main(["registered", "--registration", str(reg), "--export", str(DEMO),
                 "--out", str(out), "--no-progress"]) == 0  # fmt: skip
    # the method comparison: `methods` on the same export, its files byte for byte
    assert main(["methods", "--export", str(DEMO), "--out", str(tmp_path / "m")]) == 0
    names = sorted(p.name for p in (tmp_path / "m").iterdir() if p.suffix != ".png")
    assert names == sorted(p.name for p in (out / "methods").iterdir() if p.suffix != ".png")
    for name in names:
        assert (out / "methods" / name).read_bytes() == (tmp_path / "m" / name).read_bytes(), name
    # the seed GAMMs: `study` on the evaluations the registered rules keep, i.e. without the
    # ones that show a fallback (the demo's bots neither withdraw nor fail attention)
    _rewrite_evaluations(
        DEMO, tmp_path / "e", lambda r: not (r["fallback"].strip() and r["any_impossible"] == "0")
    )
    assert main(["study", "--export", str(tmp_path / "e"), "--out", str(tmp_path / "s"),
                 "--no-ordinal", "--no-pygam", "--no-progress"]) == 0  # fmt: skip
    for name in TABLES:
        assert (out / "study" / name).read_bytes() == (tmp_path / "s" / name).read_bytes(), name
    # what the export shows, against numbers read from the CSV directly
    ev = pd.read_csv(DEMO / "evaluations.csv", keep_default_na=False)
    fallback = (ev["fallback"] != "") & (ev["any_impossible"] == 0)
    kept = ev.loc[(ev["any_impossible"] == 0) & ~fallback]
    k = int(kept.groupby("strategy")["proximity"].nunique().min())
    assert k < 10
    report = json.loads((out / "deviations.json").read_text())
    excluded = report["observed"]["excluded_by_rule"]
    assert excluded["an item of the plan marked impossible"] == int(
        (ev["any_impossible"] == 1).sum()
    )
    assert excluded["a fallback shown instead of the method's own counterfactual"] == fallback.sum()
    assert report["observed"]["selections"]["study"]["evaluations"] == len(kept)
    changed = [d for d in report["deviations"] if d["kind"] == "model_changed"]
    assert len(changed) == 4 == len(report["deviations"])  # no quota: no sample size entry
    assert all("k = 10)" in d["registered"] and f"k = {k})" in d["run"] for d in changed)
    # the join: the study side reads models_run.txt; the seed models ran as registered
    run = deviations.models_run_read(out / "models_run.txt")
    assert len(run) == 8
    entries = deviations.study_deviations(study, models_run=run)["deviations"]
    kinds = sorted((d["kind"], d.get("model", "")) for d in entries)
    assert kinds == sorted([("exploratory_model", "")] * 4 + [
        ("registered_model_not_run", f"{o}_strategy_{v}")
        for o in ("acceptance", "action") for v in ("common", "by_level")
    ])  # fmt: skip


def test_the_registered_seed_formula_is_the_model_the_seed_report_fits() -> None:
    data = load_export(DEMO).kept_evaluations()
    a = fit_gamm(data, "action", "proximity", "participant", "tp", 10)
    b = fit_gamm(seed_formula("action", "proximity", 10), data)
    assert list(a.smooth) == list(b.smooth)
    assert b.reml == pytest.approx(a.reml, rel=1e-10)
    for name, row in a.smooth.items():
        assert b.smooth[name].edf == pytest.approx(row.edf, rel=1e-8, abs=1e-12)


# --- refused, nothing written --------------------------------------------------------------


def _write_bundle(folder: Path, doc: dict[str, Any], edit: Any = None) -> Path:
    """registration.json and the registration.md line with its hash, as `study register`
    writes them (the study side's bundle of a study file `doc`); `edit` changes the bundle
    before it is hashed."""
    b = bundle.bundle_document(doc)
    if edit is not None:
        edit(b)
    data = sf.canonical_json(b)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "registration.json").write_bytes(data)
    (folder / "registration.md").write_text(f"Bundle SHA-256: `{sf.sha256(data)}`\n")
    return folder / "registration.json"


DOC = {"format": "recourse-study", "settings": {"title": "T", "seed": 3}}


def _tamper(path: Path) -> None:
    text = path.read_text()
    path.write_text(text.replace("k = 10)", "k = 5)", 1))


CASES = {
    "tampered bundle": (None, _tamper, None, "does not match the registered"),
    "study file changed and the bundle re-hashed": (
        lambda b: b["study_file"]["settings"].update(seed=4), None, None,
        "does not match its study_file_sha256",
    ),
    "unknown exclusion rule": (
        lambda b: b["analysis_plan"]["exclusions"]["analysis"].append("answered too fast"),
        None, None, "unknown exclusion rule 'answered too fast'",
    ),
    "unknown kind of exclusion rule": (
        lambda b: b["analysis_plan"]["exclusions"].update(mood={}), None, None,
        "analysis_plan.exclusions.mood: unknown exclusion rule",
    ),
    "export without the action rating": (
        None, None, "action", "missing column(s) action",
    ),
    "a registered outcome the export lacks": (
        lambda b: b["analysis_plan"]["outcomes"]["primary"].append({"name": "trust"}), None,
        None, "no column 'trust', a registered outcome",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_refused_with_the_problem_named_and_nothing_written(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit, after, drop, message = CASES[case]
    reg = _write_bundle(tmp_path / "reg", DOC, edit)
    if after is not None:
        after(reg)
    export = DEMO
    if drop is not None:
        _rewrite_evaluations(DEMO, tmp_path / "e", drop=drop)
        export = tmp_path / "e"
    work = tmp_path / "work"
    work.mkdir()
    argv = ["registered", "--registration", str(reg), "--export", str(export),
            "--out", str(work / "out"), "--no-progress"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err, err
    assert len(err.strip().splitlines()) == 1
    assert list(work.iterdir()) == []


def test_without_a_recorded_hash_the_bundle_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reg = _write_bundle(tmp_path / "reg", DOC)
    (tmp_path / "reg" / "registration.md").unlink()
    argv = ["registered", "--registration", str(reg), "--export", str(DEMO),
            "--out", str(tmp_path / "out")]  # fmt: skip
    assert main(argv) == 2
    assert "no recorded hash" in capsys.readouterr().err
    assert main([*argv, "--sha256", "0" * 64]) == 2
    assert "does not match the registered 000" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_models_that_cannot_be_fitted_are_reported_with_why(tmp_path: Path) -> None:
    """Registered by condition (two conditions) on an export whose condition column is empty,
    plus a formula of neither form: the seed models still run; the others are reported."""
    doc = {"settings": {"title": "T", "conditions": [{"name": "a"}, {"name": "b"}]}}
    other = "acceptance ~ s(age, k = 5)"
    reg = _write_bundle(
        tmp_path / "reg", doc, lambda b: b["analysis_plan"]["models"].update(other=other)
    )
    out = tmp_path / "out"
    argv = ["registered", "--registration", str(reg), "--export", str(DEMO), "--out", str(out)]
    assert main([*argv, "--no-progress"]) == 0
    report = json.loads((out / "deviations.json").read_text())
    missing = {d["model"]: d["why"] for d in report["deviations"]
               if d["kind"] == "registered_model_not_fitted"}  # fmt: skip
    assert sorted(missing) == sorted(
        [f"{o}_condition_{v}" for o in ("acceptance", "action") for v in ("common", "by_level")]
        + ["other"]
    )
    assert "column 'condition' is empty in every row" in missing["acceptance_condition_common"]
    assert "not of the seed study's form" in missing["other"]
    assert (out / "study" / "table_s2.csv").is_file() and not (out / "methods").exists()
    assert len((out / "models_run.txt").read_text().splitlines()) == 4
    assert "Registered model not fitted: other" in (out / "deviations.md").read_text()
