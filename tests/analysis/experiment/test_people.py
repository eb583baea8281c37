"""The bootstrap over people within a run: each resample's indices equal a direct
recomputation on the resampled population; the interval over runs; which interval the
table uses and says it uses."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.experiment.paired import paired_frame
from analysis.experiment.people import PeopleDraws, people_interval, resampled_indices
from analysis.segregation.settings_indices import IndexSettings, indices_under


def _population(seed: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = 48
    groups = (np.arange(n) % 3 == 0).astype(int)  # 16 in the minority
    X = rng.normal(size=(n, 2)) + groups[:, None] * 0.8
    after = X.copy()
    movers = np.flatnonzero(groups == 1)[:6]
    after[movers] = after[movers] - 0.9  # a few minority members move towards the majority
    return X, after, groups


@pytest.mark.parametrize(
    "settings",
    [
        IndexSettings(clusters=4, kmeans_seed=0),
        IndexSettings(
            eps_quantile=0.1,
            eps_pairs="ordered_with_self",
            eps_comparison="<",
            clusters=4,
            kmeans_inits=3,
            kmeans_seed=0,
        ),
        IndexSettings(
            eps_quantile=0.3,
            eps_comparison="<",
            clusters=4,
            kmeans_seed=0,
            published_centralization=True,
        ),
    ],
)
def test_each_resample_equals_the_indices_recomputed_on_the_resampled_people(settings):
    X, after, groups = _population()
    origin = indices_under(X, groups, settings, seed=0)
    draws = PeopleDraws.draw(len(X), 8, seed=5)
    for pop in (X, after):
        fast = resampled_indices(pop, groups, settings, origin, draws)
        for b, idx in enumerate(draws.idx):
            direct = indices_under(pop[idx], groups[idx], settings, origin=origin, seed=0)
            assert fast[b, 0] == pytest.approx(direct.centralization, abs=1e-12)
            assert fast[b, 1] == pytest.approx(direct.atkinson, abs=1e-12)
            assert fast[b, 2] == pytest.approx(direct.avg_proximity, abs=1e-10)
    # the resamples differ from one another (a bootstrap, not B copies of the population)
    assert len({tuple(r) for r in np.round(fast, 12)}) > 1


def test_draw_counts_are_the_multiplicities_of_the_drawn_rows():
    d = PeopleDraws.draw(30, 4, seed=1)
    assert d.idx.shape == (4, 30) and d.counts.shape == (4, 30)
    for row, counts in zip(d.idx, d.counts, strict=True):
        assert counts.sum() == 30
        assert all(counts[i] == np.sum(row == i) for i in range(30))


def test_people_interval_is_the_percentile_interval_of_the_mean_over_runs():
    a = np.arange(100.0)
    # two runs whose b-th resamples average to b: numpy's linear quantiles 2.475 and 96.525
    lo, hi = people_interval([a - 1.0, a + 1.0])
    assert (lo, hi) == pytest.approx((2.475, 96.525))


def _runs(r: int) -> pd.DataFrame:
    rows = []
    for run in range(r):
        for k in ("centralization", "atkinson", "avg_proximity"):
            d = 0.01 * (run + 1)
            rows.append(
                {"run": run, "method": "m", "metric": k, "value": d, "before": 0, "diff": d}
            )
    return pd.DataFrame(rows)


def test_the_interval_column_says_which_interval_was_used():
    draws = {"m": [np.tile([[0.5, -0.5, 0.25]], (40, 1)) + np.linspace(0, 0.1, 40)[:, None]] * 3}
    few = paired_frame(_runs(3), draws).set_index("metric")
    assert (
        few.loc["atkinson", "interval"] == "bootstrap over people (40 resamples in each of 3 runs)"
    )
    lo, hi = people_interval([d[:, 1] for d in draws["m"]])
    assert (few.loc["atkinson", "diff_lo"], few.loc["atkinson", "diff_hi"]) == (lo, hi)
    assert few.loc["atkinson", "verdict_95"] == "better"  # the whole interval is below 0
    # but 40 resamples give p >= 2/41, and Holm over the table's 3 intervals needs 0.05/3
    assert few.loc["atkinson", "p"] == pytest.approx(2 / 41)
    assert few.loc["atkinson", "verdict"] == "no clear change"
    # without resamples: a t interval over runs; from 10 runs: a t interval over runs too
    assert paired_frame(_runs(3)).iloc[0]["interval"] == "t over 3 runs"
    many = paired_frame(_runs(12), {"m": [draws["m"][0]] * 12})
    assert set(many["interval"]) == {"t over 12 runs"}
