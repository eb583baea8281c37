"""Effects of the recourses shown, from a generated export (docs/export.md).

The before/after populations are rebuilt here straight from the CSV files (not
through analysis.segregation.effects) and scored with the slow formulas.
"""

from __future__ import annotations

import importlib.util
import json
import math

import numpy as np
import pandas as pd
import pytest
from sklearn.cluster import KMeans

from analysis.__main__ import main
from analysis.export import load_export
from analysis.segregation.effects import (
    compute_effects,
    gamm_probability,
    rating_probability,
    study_population,
)
from recourse_engine import carloan_schema

from . import slow_reference as ref
from .export_generator import make_export
from .hand_built import populations, slow_indices

WORSE_IF_HIGHER = {"centralization": True, "atkinson": True, "avg_proximity": False}


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory):
    return make_export(tmp_path_factory.mktemp("export") / "study", n=50, extra=("identity",))


def test_effects_cli_matches_hand_built_populations(export_dir, tmp_path):
    out = tmp_path / "report"
    argv = [
        "effects",
        "--export",
        str(export_dir),
        "--group",
        "gender",
        "--out",
        str(out),
        "--bootstrap",
        "40",
        "--draws",
        "10",
        "--clusters",
        "5",
    ]
    assert main(argv) == 0
    for name in ("effects.json", "report.html", "scatter.png", "compliance.png"):
        assert (out / name).stat().st_size > 0
    got = json.loads((out / "effects.json").read_text())
    assert got["n_participants"] == 50 and got["minority"] == "female"
    assert got["excluded"] == {"no_profile": 2}
    assert set(got["strategies"]) == {"identity", "proximate", "random", "sparsest"}
    X0, _, is_min = populations(export_dir, "strategy", "sparsest")
    eps = ref.eps(X0, is_min)
    assert got["eps"] == pytest.approx(eps, abs=1e-9)
    km = KMeans(n_clusters=5, random_state=0, n_init=1).fit(X0)
    before = slow_indices(X0, is_min, eps, km.predict(X0))
    for k, v in before.items():
        assert got["before"][k] == pytest.approx(v, abs=1e-9)
    for s in ("sparsest", "proximate", "random"):
        _, X1, _ = populations(export_dir, "strategy", s)
        after = slow_indices(X1, is_min, eps, km.predict(X1))
        st = got["strategies"][s]
        worse = []
        for k, v in after.items():
            assert st["after"][k] == pytest.approx(v, abs=1e-9)
            d = st["difference"][k]
            assert d["estimate"] == pytest.approx(v - before[k], abs=1e-9)
            lo, hi = d["ci95"]
            assert lo <= hi
            if v != before[k] and (v > before[k]) == WORSE_IF_HIGHER[k]:
                worse.append(k)
        assert st["worse_point_estimate"] == worse
        assert st["n_worse"] == len(st["worse"])
        assert st["bootstrap_used"] == 40
    html = (out / "report.html").read_text()
    assert "sparsest" in html and "scatter.png" in html and "compliance.png" in html


def test_identity_recourse_changes_nothing(export_dir):
    ex = load_export(export_dir)
    pop = study_population(ex.evaluations, ex.participants, carloan_schema(), "gender")
    eff = compute_effects(pop, clusters=5, bootstrap=15, draws=5, curve_draws=3)
    st = eff["strategies"]["identity"]
    for k in ("centralization", "atkinson", "avg_proximity"):
        assert st["difference"][k] == {
            "estimate": 0.0,
            "ci95": [0.0, 0.0],
            "bootstrap_mean": 0.0,
            "p": 1.0,
            "verdict_95": "no clear change",
            "p_holm": 1.0,
            "verdict": "no clear change",
        }
        assert st["partial"][k]["mean"] == pytest.approx(eff["before"][k], abs=1e-15)
        assert st["curve"][k] == pytest.approx([eff["before"][k]] * 5, abs=1e-15)
    assert st["n_worse"] == 0


def test_rating_probability_mapping():
    p = rating_probability(np.array([1, 4, 7, 7, np.nan]), np.array([0, 0, 0, 1, 0], bool))
    assert p.tolist() == [0.0, 0.5, 1.0, 0.0, 0.0]


@pytest.mark.parametrize(
    "action,impossible,expect", [(7, 0.0, "after"), (1, 0.0, "before"), (7, 1.0, "before")]
)
def test_partial_compliance_extremes(tmp_path, action, impossible, expect):
    d = make_export(tmp_path / "x", n=30, seed=3, action=action, impossible_share=impossible)
    ex = load_export(d)
    pop = study_population(ex.evaluations, ex.participants, carloan_schema(), "gender")
    eff = compute_effects(pop, clusters=4, bootstrap=2, draws=6, curve_draws=2)
    for s, st in eff["strategies"].items():
        target = st["after"] if expect == "after" else eff["before"]
        for k in ("centralization", "atkinson", "avg_proximity"):
            assert st["partial"][k]["mean"] == pytest.approx(target[k], abs=1e-12), (s, k)
            assert st["partial"][k]["sd"] == pytest.approx(0.0, abs=1e-12)
        assert st["partial"]["share_implemented"] == (1.0 if expect == "after" else 0.0)


def test_monte_carlo_share_matches_the_ratings(export_dir):
    ex = load_export(export_dir)
    pop = study_population(ex.evaluations, ex.participants, carloan_schema(), "gender")
    draws = 60
    eff = compute_effects(pop, clusters=4, bootstrap=1, draws=draws, curve_draws=1, seed=7)
    for s, st in eff["strategies"].items():
        p = rating_probability(pop.action[s], pop.impossible[s])
        var = float(np.sum(p * (1 - p))) / (len(p) ** 2 * draws)
        assert abs(st["partial"]["share_implemented"] - p.mean()) <= 5 * math.sqrt(var) + 1e-12
        assert st["partial"]["mean_probability"] == pytest.approx(p.mean())


def _run(argv, capsys):
    rc = main(argv)
    return rc, capsys.readouterr().err.strip()


def test_effects_bad_input(tmp_path, capsys, export_dir):
    out = tmp_path / "out"
    base = ["effects", "--export", str(export_dir), "--out", str(out)]
    rc, err = _run([*base, "--group", "nope"], capsys)
    assert rc == 2 and "no column 'nope'" in err
    rc, err = _run(
        ["effects", "--export", str(tmp_path / "none"), "--group", "gender", "--out", str(out)],
        capsys,
    )
    assert rc == 2 and "none: no such file or folder" in err
    rc, err = _run([*base, "--group", "gender", "--bootstrap", "0"], capsys)
    assert rc == 2 and "--bootstrap" in err
    rc, err = _run([*base, "--group", "gender", "--groups", "female"], capsys)
    assert rc == 2 and "exactly two values" in err
    three = make_export(
        tmp_path / "three", n=30, genders=("female", "male", "other"), gender_p=(0.4, 0.4, 0.2)
    )
    rc, err = _run(
        ["effects", "--export", str(three), "--group", "gender", "--out", str(out)], capsys
    )
    assert rc == 2 and "has 3 values" in err and "--groups" in err
    assert not out.exists()
    assert "\n" not in err and err.startswith("error: ")
    rc, err = _run(
        [
            "effects",
            "--export",
            str(three),
            "--group",
            "gender",
            "--out",
            str(out),
            "--groups",
            "female,other",
            "--bootstrap",
            "3",
            "--draws",
            "2",
            "--clusters",
            "3",
        ],
        capsys,
    )
    assert rc == 0
    got = json.loads((out / "effects.json").read_text())
    assert set(got["groups"]) == {"female", "other"} and got["excluded"]["other_groups"] > 0


def test_bad_codes_in_the_export_are_named(tmp_path, capsys):
    d = make_export(tmp_path / "bad", n=20)
    ev = pd.read_csv(d / "evaluations.csv")
    ev.loc[3, "cf_education"] = 9
    ev.to_csv(d / "evaluations.csv", index=False)
    rc, err = _run(
        ["effects", "--export", str(d), "--group", "gender", "--out", str(tmp_path / "o")], capsys
    )
    assert rc == 2 and "row 4, column 'cf_education'" in err and "not a code" in err
    assert not (tmp_path / "o").exists()


@pytest.mark.skipif(
    importlib.util.find_spec("analysis.gamm") is None,
    reason="analysis.gamm (the GAMM fitter) is not in this checkout",
)
def test_gamm_probabilities_follow_the_mapping(tmp_path):
    from analysis.gamm import fit_gamm

    d = make_export(tmp_path / "g", n=40, seed=5)
    ex = load_export(d)
    pop = study_population(ex.evaluations, ex.participants, carloan_schema(), "gender")
    probs = gamm_probability(pop, ex.evaluations)
    kept = ex.evaluations.loc[ex.evaluations["any_impossible"] == 0]
    fit = fit_gamm(kept, outcome="action", distance="proximity", participant="participant")
    for s in pop.strategies:
        rows = ex.evaluations[ex.evaluations["strategy"] == s].sort_values(
            ["participant", "position"]
        )
        rows = rows.drop_duplicates("participant")
        want = np.clip((fit.predict(rows) - 1) / 6, 0, 1)
        want[rows["any_impossible"].to_numpy() == 1] = 0.0
        ids = rows["participant"].astype(str).to_numpy()
        got = probs[s][np.searchsorted(pop.participants, ids)]
        np.testing.assert_allclose(got, want, atol=1e-12)


def test_without_usable_resamples_there_is_no_interval_no_p_and_strict_json(export_dir):
    import json

    ex = load_export(export_dir)
    pop = study_population(ex.evaluations, ex.participants, carloan_schema(), "gender")
    eff = compute_effects(pop, clusters=5, bootstrap=0, draws=2, curve_draws=1)
    assert eff["bootstrap_usable"] == 0
    for st in eff["strategies"].values():
        for d in st["difference"].values():
            assert d["ci95"] is None and d["p"] is None and d["p_holm"] is None
            assert d["verdict"] == d["verdict_95"] == "no clear change"
    json.dumps(eff, allow_nan=False)  # a NaN would make effects.json invalid JSON
