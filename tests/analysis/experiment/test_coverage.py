"""Coverage of the paired-difference interval (`analysis.experiment.paired.interval`) by
simulation: run-level differences drawn from a known distribution, the share of simulated
experiments whose 95% interval holds the true mean.

4,000 experiments per case give a Monte-Carlo standard error of about 0.35 points at 95%,
so a coverage within ±2 points of nominal is a statement about the interval, not about the
draw. The skewed case is a lognormal with σ = 0.25 (skewness ≈ 0.8). The percentile
bootstrap over runs that `interval` used from 10 runs until issue 29 covers about 90% on
the normal case at R = 10 and fails this test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from analysis.experiment.paired import interval

EXPERIMENTS = 4_000
SIGMA = 0.25


def _coverage(draws: np.ndarray, truth: float) -> float:
    hits = 0
    for d in draws:
        lo, hi, _ = interval(d)
        hits += lo <= truth <= hi
    return hits / len(draws)


@pytest.mark.parametrize("runs", [5, 10])
@pytest.mark.parametrize("shape", ["normal", "lognormal"])
def test_interval_covers_within_two_points_of_95(shape, runs):
    rng = np.random.default_rng([29, runs, len(shape)])
    if shape == "normal":
        draws, truth = rng.normal(0.002, 0.004, size=(EXPERIMENTS, runs)), 0.002
    else:  # a change of 0.01 · (lognormal − 1): skewed to the right
        draws = 0.01 * (rng.lognormal(0.0, SIGMA, size=(EXPERIMENTS, runs)) - 1.0)
        truth = 0.01 * (math.exp(SIGMA**2 / 2) - 1.0)
    got = _coverage(draws, truth)
    assert abs(got - 0.95) <= 0.02, f"{shape}, {runs} runs: coverage {got:.4f}"
