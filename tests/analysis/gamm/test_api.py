"""The public API's contract: predictions with and without participant effects, unseen
participants, the summary_dict layout the `gamm` CLI writes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.gamm import GammFit, GammInputError, fit_gamm

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def fitted():
    data = pd.read_csv(FIXTURES / "study_steep.csv", dtype={"participant": str})
    data = data[data["participant"].isin(data["participant"].unique()[:120])]
    return data, fit_gamm(data, "action", "sparsity", "participant")


def test_predict_population_and_participants(fitted):
    data, fit = fitted
    assert isinstance(fit, GammFit)
    full = fit.predict(data)
    population = fit.predict(data, include_random=False)
    b0 = fit.term_coefficients("s(participant)")
    b1 = fit.term_coefficients("s(participant,sparsity)")
    levels = list(fit.design.terms[2].levels)
    idx = np.array([levels.index(p) for p in data["participant"]])
    assert np.allclose(full - population, b0[idx] + b1[idx] * data["sparsity"].to_numpy())
    # a participant not in the fit gets the population curve
    new = data.iloc[:3].assign(participant="someone-new")
    assert np.allclose(fit.predict(new), population[:3])
    # the population curve is the intercept plus the centred smooth
    grid = fit.smooth_grid("s(sparsity)", points=5)
    at_grid = fit.predict(pd.DataFrame({"sparsity": grid["x"]}), include_random=False)
    assert np.allclose(at_grid, fit.parametric["(Intercept)"]["estimate"] + grid["fit"])


def test_predict_validates(fitted):
    _, fit = fitted
    with pytest.raises(GammInputError, match="missing column"):
        fit.predict(pd.DataFrame({"sparsity": [1.0]}))
    with pytest.raises(GammInputError, match="numeric"):
        fit.predict(pd.DataFrame({"sparsity": ["far"]}), include_random=False)


def test_summary_dict_layout_and_cli_json(fitted, tmp_path):
    data, fit = fitted
    summary = fit.summary_dict()
    assert {"n", "aic", "scale", "parametric", "smooth"} <= set(summary)
    assert set(summary["parametric"]["(Intercept)"]) == {"estimate", "se", "t", "p"}
    assert list(summary["smooth"]) == ["s(sparsity)", "s(participant)", "s(participant,sparsity)"]
    for row in summary["smooth"].values():
        assert set(row) == {"edf", "ref_df", "F", "p"}
    src, out = tmp_path / "in.csv", tmp_path / "out"
    data.to_csv(src, index=False)
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "analysis",
            "gamm",
            "--input",
            str(src),
            "--outcome",
            "action",
            "--distance",
            "sparsity",
            "--participant",
            "participant",
            "--out",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    written = json.loads((out / "gamm.json").read_text())
    assert (out / "summary.txt").read_text().startswith("Family: gaussian")
    assert written["n"] == summary["n"]
    assert written["aic"] == pytest.approx(summary["aic"], rel=1e-9)
    assert written["smooth"]["s(sparsity)"]["F"] == pytest.approx(
        summary["smooth"]["s(sparsity)"]["F"], rel=1e-9
    )


def test_smooth_test_takes_a_rank_deficient_term():
    """A by-level's smooth with fewer distinct values than columns: X_j'X_j is singular and
    can round to a matrix with a tiny negative eigenvalue, which Cholesky refuses (mgcv's QR
    of X_j never fails); the test still runs, with the root's cross-product equal to X_j'X_j."""
    from analysis.gamm import inference as inf
    from analysis.gamm.linalg import cross_product_root

    rng = np.random.default_rng(3)
    q, _ = np.linalg.qr(rng.normal(size=(7, 7)))
    vals = np.array([38.7, 12.0, 6.5, 3.1, 1.2, 0.4, -3e-15])  # rank 6, rounded below zero
    xtx = (q * vals) @ q.T
    xtx = (xtx + xtx.T) / 2
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.cholesky(xtx)
    root = cross_product_root(xtx)
    assert np.allclose(root, np.triu(root))
    np.testing.assert_allclose(root.T @ root, xtx, rtol=0, atol=1e-9 * np.abs(xtx).max())
    res = inf.smooth_test(rng.normal(size=7), xtx, np.eye(7) * 0.1, 5.4, 30.0)
    assert np.isfinite(res.stat) and 0.0 <= res.p <= 1.0
