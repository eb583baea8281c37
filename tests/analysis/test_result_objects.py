"""Result objects as an analyst uses statsmodels' (`analysis.gamm.results`,
`analysis.segregation.frames`): each view must show the numbers the fit already holds (those
are checked against mgcv and the slow references elsewhere), and the partial residuals and
bands of the plot are recomputed here by another route."""

from __future__ import annotations

import html
import json
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest

from analysis.gamm import fit_gamm
from analysis.segregation import segregation_indices

matplotlib.use("Agg")
FIX = Path(__file__).parent / "gamm" / "fixtures"


@pytest.fixture(scope="module")
def fitted():
    data = pd.read_csv(FIX / "study_steep.csv", dtype={"participant": str})
    return data, fit_gamm(data, "action", "sparsity", "participant")


@pytest.fixture(scope="module")
def by_fit():
    data = pd.read_csv(FIX / "study_methods.csv")
    formula = "action ~ strategy + s(proximity, by = strategy, k = 5) + s(uid, bs = 're')"
    return data, fit_gamm(formula, data)


def test_summary_text_html_and_tables_show_the_fit(by_fit):
    _, fit = by_fit
    s = fit.summary()
    text = str(s)
    assert text.startswith("Family: gaussian") and fit.formula in text
    par, smo = s.tables
    assert list(par.index) == list(fit.parametric) and list(smo.index) == list(fit.smooth)
    for name, row in fit.parametric.items():
        assert par.loc[name, "Estimate"] == row["estimate"]
        assert par.loc[name, "Pr(>|t|)"] == row["p"]
        assert f"{row['estimate']:.4g}" in text
    for name, row in fit.smooth.items():
        assert smo.loc[name, "edf"] == row.edf and smo.loc[name, "F"] == row.F
        assert f"{name}" in text and f"{row.edf:8.3f}".strip() in text
    assert f"n = {fit.n}" in text and f"{fit.aic:.5g}" in text
    page = fit._repr_html_()
    assert "<table" in page and "strategyproximate" in page and html.escape(fit.formula) in page


def test_to_frame_one_row_per_term(by_fit):
    _, fit = by_fit
    frame = fit.to_frame()
    assert list(frame["term"]) == list(fit.parametric) + list(fit.smooth)
    par = frame.set_index("term").loc[list(fit.parametric)]
    assert (par["type"] == "parametric").all()
    assert par["estimate"].tolist() == [r["estimate"] for r in fit.parametric.values()]
    assert par["statistic"].tolist() == [r["t"] for r in fit.parametric.values()]
    smo = frame.set_index("term").loc[list(fit.smooth)]
    assert smo["edf"].tolist() == [r.edf for r in fit.smooth.values()]
    assert smo.loc["s(uid)", "type"] == "random"
    assert smo.loc["s(proximity):strategyrandom", "type"] == "smooth"


def test_predict_with_se(fitted):
    data, fit = fitted
    new = data.head(20)
    got = fit.predict(new, se=True)
    assert list(got.columns) == ["fit", "se", "lower", "upper"]
    np.testing.assert_allclose(got["fit"], fit.predict(new), rtol=1e-10, atol=1e-12)
    ref = fit.predict_se(new)  # predict.gam(se.fit = TRUE), checked against mgcv
    np.testing.assert_allclose(got["se"], ref["se"])
    np.testing.assert_allclose(got["upper"] - got["fit"], 1.959963984540054 * got["se"])
    pop = fit.predict(new, include_random=False, se=True)
    np.testing.assert_allclose(pop["fit"], fit.predict(new, include_random=False), atol=1e-12)
    assert (pop["se"] < got["se"]).all()  # participant effects add uncertainty


def test_plot_draws_the_band_and_partial_residuals(fitted):
    data, fit = fitted
    ax = fit.plot(residuals=True)
    grid = fit.smooth_grid("s(sparsity)")
    line = ax.get_lines()[0]
    np.testing.assert_allclose(line.get_xdata(), grid["x"])
    np.testing.assert_allclose(line.get_ydata(), grid["fit"])
    dots = ax.collections[0].get_offsets()
    # partial residual = y - (everything but the smooth), by another route: the prediction
    # with the smooth excluded (intercept + this participant's effects)
    rest = fit.predict_se(data, exclude=["s(sparsity)"])["fit"].to_numpy()
    np.testing.assert_allclose(np.asarray(dots)[:, 1], data["action"] - rest, atol=1e-8)
    np.testing.assert_allclose(np.asarray(dots)[:, 0], data["sparsity"])
    with pytest.raises(KeyError, match="no smooth term"):
        fit.plot(["s(nothing)"])


def test_plot_of_factor_by_smooths_one_axes_each(by_fit):
    data, fit = by_fit
    axes = fit.plot(residuals=True)
    smooths = [t for t in fit.smooth if t.startswith("s(proximity)")]
    assert len(axes) == len(smooths)
    level = smooths[0].split(":strategy")[1]
    assert len(axes[0].collections[0].get_offsets()) == (data["strategy"] == level).sum()


def test_index_result_to_frame():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    g = np.where(np.arange(60) < 20, "f", "m")
    res = segregation_indices(X, g, clusters=4)
    frame = res.to_frame()
    assert len(frame) == 1
    for key, value in res.to_json().items():
        assert frame.loc[0, key] == value
    assert frame.loc[0, "n_minority"] == 20


def test_effects_result_frames():
    from analysis.segregation.frames import EffectsResult

    arm = {
        "after": {"centralization": 0.3, "atkinson": 0.2, "avg_proximity": 0.5},
        "n_shown": 7,
        "difference": {
            i: {"estimate": d, "ci95": ci, "bootstrap_mean": d, "verdict": v}
            for i, d, ci, v in [
                ("centralization", 0.1, [0.05, 0.15], "worse"),
                ("atkinson", 0.0, [-0.1, 0.1], "no clear change"),
                ("avg_proximity", 0.1, None, "no clear change"),
            ]
        },
        "partial": {
            i: {"mean": 0.25, "q025": 0.2, "q975": 0.3}
            for i in ("centralization", "atkinson", "avg_proximity")
        },
        "curve": {
            "pi": [0.0, 1.0],
            "centralization": [0.2, 0.3],
            "atkinson": [0.2, 0.2],
            "avg_proximity": [0.4, 0.5],
        },
    }
    effects = EffectsResult(
        {
            "before": {"centralization": 0.2, "atkinson": 0.2, "avg_proximity": 0.4},
            "strategies": {"sparsest": arm},
            "by": {"method": {"ebr": arm}},
            "n_participants": 10,
            "minority": "f",
            "n_minority": 4,
            "bootstrap": 5,
        }
    )
    assert json.loads(json.dumps(effects)) == dict(effects)
    frame = effects.to_frame()
    assert frame[["grouping", "arm"]].drop_duplicates().values.tolist() == [
        ["strategy", "sparsest"],
        ["method", "ebr"],
    ]
    row = frame.iloc[0]
    assert (row["before"], row["after"], row["difference"]) == (0.2, 0.3, 0.1)
    assert (row["ci_low"], row["ci_high"], row["verdict"]) == (0.05, 0.15, "worse")
    assert np.isnan(frame.iloc[2]["ci_low"])
    curves = effects.curves()
    assert len(curves) == 2 * 2 * 3
    assert curves.query("arm == 'sparsest' and pi == 1.0 and index == 'centralization'")[
        "value"
    ].item() == pytest.approx(0.3)
    assert "worse" in effects._repr_html_()
