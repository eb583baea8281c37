"""`recourse-analysis power` end to end (in-process, tiny grids) and its refusals: each bad
input ends with one `error:` line naming the field, exit status 2, and nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from analysis.__main__ import main
from analysis.power import PowerInputError, parse_spec

DEMO = Path(__file__).resolve().parents[3] / "examples" / "data" / "demo_export"

STATED = {
    "outcome": "action",
    "ratings_per_participant": 5,
    "distance": {"name": "proximity", "low": 0.0, "high": 1.0},
    "intercept": 4.0,
    "smooth": {"shape": "linear", "change": -1.5},
    "contrasts": {"strategy": {"proximate": 0.0, "random": -0.5, "sparsest": 0.0}},
    "allocation": {"strategy": {"sparsest": 1, "proximate": 1, "random": 3}},
    "random_effects": {"intercept_sd": 0.8},
    "residual_sd": 1.0,
    "cut_points": [1.5, 2.5, 3.5, 4.5, 5.5, 6.5],
}


def write_spec(tmp_path: Path, spec: dict, name: str = "effects.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(spec))
    return path


def test_stated_effects_writes_table_curve_and_smallest_n(tmp_path, capsys):
    effects = write_spec(tmp_path, STATED)
    out = tmp_path / "power"
    argv = ["power", "--effects", str(effects), "--participants", "12,6", "--replicates", "2",
            "--out", str(out), "--no-progress", "--seed", "7"]  # fmt: skip
    assert main(argv) == 0
    summary = pd.read_csv(out / "power.csv")
    assert set(summary["test"]) == {"strategyrandom", "strategysparsest", "s(proximity)"}
    assert list(summary.loc[summary["test"] == "s(proximity)", "n"]) == [6, 12]
    assert (summary["replicates"] == 2).all() and summary["power"].between(0, 1).all()
    assert ((summary["lower"] <= summary["power"]) & (summary["power"] <= summary["upper"])).all()
    reps = pd.read_csv(out / "replicates.csv", keep_default_na=False)
    assert len(reps) == 4 and list(reps.columns[:2]) == ["n", "replicate"]
    document = json.loads((out / "power.json").read_text())
    assert document["participants"] == [6, 12] and set(document["smallest_n"]) == set(
        summary["test"]
    )
    assert (out / "power_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "s(proximity): power" in capsys.readouterr().out
    # the same seed gives the same replicates
    again = tmp_path / "again"
    assert main([*argv[:-5], "--out", str(again), "--no-progress", "--seed", "7"]) == 0
    pd.testing.assert_frame_equal(
        reps, pd.read_csv(again / "replicates.csv", keep_default_na=False)
    )


def test_pilot_export_and_pdf_figure(tmp_path):
    out = tmp_path / "pilot"
    argv = ["power", "--pilot", str(DEMO), "--outcome", "action", "--distance", "proximity",
            "--participants", "12", "--replicates", "2", "--test", "s(proximity)",
            "--interval", "clopper-pearson", "--figure-format", "pdf", "--out", str(out),
            "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    document = json.loads((out / "power.json").read_text())
    assert document["pilot_fit"]["participants"] > 12
    assert "s(participant,proximity)" in document["pilot_fit"]["random_sd"]
    assert (out / "power_curve.pdf").read_bytes()[:4] == b"%PDF"
    assert pd.read_csv(out / "power.csv")["interval"].iloc[0] == "clopper-pearson 95%"


NO_TERM = {k: v for k, v in STATED.items() if k not in ("smooth", "contrasts", "allocation")}


@pytest.mark.parametrize(
    ("spec", "extra", "message"),
    [
        (NO_TERM, [], "effects: names no term"),
        (STATED, ["--participants", "0"], "--participants: each grid point needs at least 2"),
        (STATED, ["--participants", "10,x"], "--participants: 'x' is not a whole number"),
        (STATED, ["--test", "strategyother"], "--test: unknown test 'strategyother'"),
        ({**STATED, "tests": ["s(distance)"]}, [], "effects.tests: unknown test 's(distance)'"),
        ({**STATED, "cut_points": None}, ["--test", "ordinal"], "'ordinal' (it needs ratings"),
        ({**STATED, "model": "action ~ age + s(proximity)"}, [], "effects.model: term age uses"),
        (STATED, ["--formula", "action ~ s(proximity"], "--formula: formula: cannot read"),
        (STATED, ["--alpha", "1.5"], "--alpha: must lie between 0 and 1"),
        (STATED, ["--pilot", "x.zip"], "give --effects FILE (stated effects) or --pilot"),
        (STATED, ["--workers", "2", "--scheduler", "tcp://127.0.0.1:8786"], "give one"),
    ],
)
def test_bad_input_is_refused_naming_the_field(tmp_path, capsys, spec, extra, message):
    effects = write_spec(tmp_path, spec)
    out = tmp_path / "out"
    argv = ["power", "--effects", str(effects), "--replicates", "2", "--out", str(out)]
    if "--participants" not in extra:
        argv += ["--participants", "6,12"]
    assert main(argv + extra) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err, err
    assert not out.exists()


def test_missing_pilot_is_refused(tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["power", "--pilot", str(tmp_path / "none"), "--outcome", "action", "--distance",
            "proximity", "--participants", "10", "--out", str(out)]  # fmt: skip
    assert main(argv) == 2
    assert "error: --pilot" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"colour": "red"}, "effects.colour: unknown field"),
        ({"residual_sd": 0}, "effects.residual_sd: must be positive"),
        ({"cut_points": [1, 3, 2, 4, 5, 6]}, "effects.cut_points: must increase"),
        ({"ratings_per_participant": 4}, "effects.allocation.strategy: counts sum to 5"),
        ({"smooth": {"shape": "wiggly"}}, "effects.smooth.shape: one of linear"),
        ({"distance": {"name": "proximity", "low": 1, "high": 0}}, "effects.distance.high"),
        ({"random_effects": {"intercept_sd": -1}}, "effects.random_effects.intercept_sd"),
        ({"contrasts": {"strategy": {"a": 0}}, "allocation": {}}, "effects.contrasts.strategy"),
    ],
)
def test_spec_fields_are_checked(change, field):
    with pytest.raises(PowerInputError, match=field.replace("(", r"\(").replace(".", r"\.")):
        parse_spec({**STATED, **change})


def test_yaml_and_json_read_alike(tmp_path):
    import yaml

    from analysis.power import load_spec

    (tmp_path / "e.yaml").write_text(yaml.safe_dump(STATED))
    assert load_spec(tmp_path / "e.yaml") == load_spec(write_spec(tmp_path, STATED))
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(PowerInputError, match=r"bad\.json: cannot parse"):
        load_spec(tmp_path / "bad.json")
