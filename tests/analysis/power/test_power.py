"""Power analysis against independent references.

The model of ``fixtures/lmm_effects.json`` — a random intercept and a parametric
within-participant method effect, no smooth — is also a linear mixed model, so its power has
two references: lme4's ``lmer`` fitted in R to the very data sets the power analysis draws
(``fixtures/make_fixture.R``; the test reads its committed output, not R), and the analytic
power of the balanced within-participant contrast (noncentral t). 60 replicates at 8, 16 and
32 participants, one module-scoped run through ``analysis.grid.map_cells``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis.power import (
    StatedModel,
    cell_rng,
    clopper_pearson,
    load_spec,
    make_plan,
    parse_spec,
    run_cell,
    run_replicates,
    smallest_n,
    summarise,
    wilson,
)

FIXTURES = Path(__file__).parent / "fixtures"
GRID = json.loads((FIXTURES / "lmm_grid.json").read_text())
TEST = "methodB"


@pytest.fixture(scope="module")
def lmm():
    spec = load_spec(FIXTURES / "lmm_effects.json")
    plan = make_plan(StatedModel(spec), spec.model, spec.tests, GRID["seed"])
    table = run_replicates(plan, GRID["participants"], GRID["replicates"])
    reference = pd.read_csv(FIXTURES / "lmer_reference.csv")
    return spec, plan, table, reference


def test_reference_fits_the_same_data_sets(lmm):
    spec, plan, table, reference = lmm
    assert len(reference) == len(table) == len(GRID["participants"]) * GRID["replicates"]
    for row in reference.itertuples():
        data = plan.model.simulate(
            int(row.n), cell_rng(GRID["seed"], int(row.n), int(row.replicate))
        )
        assert data["y"].sum() == pytest.approx(row.y_sum, abs=1e-9), (row.n, row.replicate)


def test_power_agrees_with_lmer_on_the_same_data(lmm):
    _, plan, table, reference = lmm
    merged = table.merge(reference, on=["n", "replicate"])
    assert (merged["error"] == "").all()
    # the same fits: our GAMM's REML p-values against lmer's t with the within-participant df
    # (the df differ slightly: mgcv's n - sum(EDF) against nobs - participants - 1)
    assert np.max(np.abs(merged[TEST] - merged["p"])) < 0.01
    alpha = GRID["alpha"]
    ours, theirs = merged[TEST] < alpha, merged["p"] < alpha
    for n, group in merged.groupby("n"):
        m = len(group)
        k_ours, k_ref = int(ours[group.index].sum()), int(theirs[group.index].sum())
        discordant = int((ours[group.index] != theirs[group.index]).sum())
        # paired Monte Carlo error of the difference of two powers on the same replicates
        assert abs(k_ours - k_ref) <= 2 * math.sqrt(discordant) + 1e-9, (n, k_ours, k_ref)
        assert discordant <= 0.03 * m
    summary = summarise(table, plan.tests, alpha)
    assert list(summary["n"]) == GRID["participants"]


def analytic_power(n: int, delta: float, sigma: float, per_level: int, ratings: int, alpha: float):
    """Two-sided t test of a balanced within-participant contrast: each participant's mean
    difference has variance sigma^2 (2 / per_level); error df nobs - participants - 1."""
    se = sigma * math.sqrt(2 / per_level) / math.sqrt(n)
    df = n * ratings - n - 1
    crit = stats.t.ppf(1 - alpha / 2, df)
    ncp = delta / se
    return float(stats.nct.sf(crit, df, ncp) + stats.nct.cdf(-crit, df, ncp))


def test_power_matches_the_analytic_power_and_rises_with_n(lmm):
    spec, plan, table, _ = lmm
    delta = spec.contrasts["method"]["B"] - spec.contrasts["method"]["A"]
    summary = summarise(table, plan.tests, GRID["alpha"], "wilson", level=0.99)
    for row in summary.itertuples():
        exact = analytic_power(row.n, delta, spec.residual_sd, 2, spec.ratings, GRID["alpha"])
        assert row.lower <= exact <= row.upper, (row.n, row.power, exact)
    assert np.all(np.diff(summary["power"].to_numpy()) > 0)
    found = smallest_n(summary, 0.8)[TEST]
    assert found["estimate"] == GRID["participants"][-1]


def test_a_cell_is_the_same_whatever_else_runs(lmm):
    _, plan, table, _ = lmm
    for n, rep in [(32, 60), (8, 3), (16, 41)]:  # alone and out of order
        alone = run_cell(plan, (n, rep))
        row = table[(table["n"] == n) & (table["replicate"] == rep)].iloc[0]
        assert alone[TEST] == row[TEST]


def test_intervals_match_statsmodels():
    from statsmodels.stats.proportion import proportion_confint

    for k, m in [(0, 20), (3, 20), (17, 40), (200, 200), (123, 200)]:
        w = proportion_confint(k, m, alpha=0.05, method="wilson")
        cp = proportion_confint(k, m, alpha=0.05, method="beta")
        assert wilson(k, m) == pytest.approx(w, abs=1e-12)
        assert clopper_pearson(k, m) == pytest.approx(cp, abs=1e-10)


def test_smallest_n_uses_the_estimate_and_the_lower_bound():
    summary = pd.DataFrame(
        {
            "test": ["a"] * 3 + ["b"] * 3,
            "n": [10, 20, 40] * 2,
            "power": [0.5, 0.82, 0.95, 0.1, 0.2, 0.3],
            "lower": [0.4, 0.7, 0.85, 0.0, 0.1, 0.2],
        }
    )
    assert smallest_n(summary, 0.8) == {
        "a": {"estimate": 20, "lower_bound": 40},
        "b": {"estimate": None, "lower_bound": None},
    }


def test_seed_model_with_smooth_contrast_and_ordinal_check():
    """One replicate of a seed-shaped study: every kind of test yields a p-value."""
    spec = parse_spec(
        {
            "outcome": "action",
            "ratings_per_participant": 5,
            "distance": {"name": "proximity", "low": 0, "high": 1},
            "intercept": 4.0,
            "smooth": {"shape": "exponential", "change": -2.0},
            "contrasts": {"strategy": {"proximate": 0, "random": -0.8, "sparsest": 0}},
            "allocation": {"strategy": {"sparsest": 1, "proximate": 1, "random": 3}},
            "random_effects": {"intercept_sd": 0.8, "slope_sd": 0.3},
            "residual_sd": 1.0,
            "cut_points": [1.5, 2.5, 3.5, 4.5, 5.5, 6.5],
        }
    )
    from analysis.power import default_formula

    plan = make_plan(
        StatedModel(spec), default_formula(spec), ["strategyrandom", "s(proximity)", "ordinal"], 3
    )
    data = plan.model.simulate(60, cell_rng(3, 60, 1))
    assert set(data["action"]) <= set(range(1, 8)) and len(data) == 300
    assert (
        data.groupby("participant")["strategy"].apply(lambda s: (s == "random").sum()) == 3
    ).all()
    row = run_cell(plan, (60, 1))
    assert row["error"] == ""
    assert all(0 <= row[t] < 0.05 for t in plan.tests), row
