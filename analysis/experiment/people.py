"""A 95% interval for the after − before change of the segregation indices from a bootstrap
over *people* within each run, used below 10 runs when the experiment computes one.

Each resample draws n people with replacement from the run's population; the same draw is
used before and after recourse (the change is paired person by person), and the original
population's minority, ε and K-Means neighbourhoods are kept, as for the reported indices.
So a resample's indices are exactly those `indices_under(X[idx], groups[idx], settings,
origin=origin)` would give (the test checks this draw by draw), but each catalogue index is
computed from the resamples' multiplicities at once, by its `resampled` computation
(`analysis.segregation.resampled`).

The interval for the mean change over R runs: the b-th resample of every run is averaged
over runs, and the 2.5% and 97.5% quantiles of those B means are taken. It measures how much
the change depends on which people happen to be in the population, with each run's decision
model and counterfactuals held fixed; it is not a run-to-run interval (`paired.interval`
gives that). `minority_sizes` gives each run's minority size, so that a change of
centralization can be stated in people.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.segregation.catalogue import resampled_values
from analysis.segregation.indices import IndexResult
from analysis.segregation.inputs import split_groups
from analysis.segregation.resampled import Resamples, multiplicities
from analysis.segregation.settings_indices import IndexSettings
from analysis.significance import bootstrap_pvalue


@dataclass(frozen=True)
class PeopleDraws:
    """B resamples of n people: `idx` (B, n) the drawn rows, `counts` (B, n) multiplicities."""

    idx: np.ndarray
    counts: np.ndarray

    @classmethod
    def draw(cls, n: int, resamples: int, seed: int) -> PeopleDraws:
        rng = np.random.default_rng([seed, 15])
        idx = rng.integers(0, n, size=(resamples, n))
        return cls(idx, multiplicities(idx, n))


def resampled_indices(
    X: np.ndarray,
    groups: np.ndarray,
    settings: IndexSettings,
    origin: IndexResult,
    draws: PeopleDraws,
) -> np.ndarray:
    """(B, k): every catalogue index of every resample of X, columns in the catalogue's order."""
    is_min, _ = split_groups(groups, origin.minority)
    rs = Resamples(
        np.asarray(X, dtype=np.float64),
        is_min,
        draws.idx,
        draws.counts,
        origin.eps,
        origin.kmeans,
        settings.eps_comparison,
        settings.published_centralization,
    )
    return resampled_values(rs)


def people_means(per_run: list[np.ndarray]) -> np.ndarray:
    """(B,): the b-th resampled change averaged over runs (each array: one run's B changes
    of one index)."""
    return np.mean(np.stack(per_run), axis=0)


def people_interval(per_run: list[np.ndarray], level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of the mean over runs of the b-th resampled change."""
    a = (1 - level) / 2
    lo, hi = np.quantile(people_means(per_run), [a, 1 - a])
    return float(lo), float(hi)


def people_pvalue(means: np.ndarray) -> float:
    """Two-sided percentile-bootstrap p-value for "no change" from the B resampled means
    (`analysis.significance.bootstrap_pvalue`: never below 2/(B + 1))."""
    return bootstrap_pvalue(means)


def minority_sizes(
    dataset: str,
    seeds: list[int],
    population: str,
    train_share: float,
    subsample: int | None,
    holdout: float = 0.0,
) -> dict[int, int]:
    """seed -> the minority's size in that run's population, as the experiment builds it
    (`load_dataset`, then the training split under `population="train"`, then the held-out
    part that is scored when `holdout` > 0); for giving a change of centralization (a share
    of the minority) in people."""
    from analysis.experiment.space import heldout_split, training_split
    from recourse_engine.datasets import load_dataset

    out: dict[int, int] = {}
    for seed in seeds:
        data = load_dataset(dataset, seed=seed, subsample=subsample)
        if population == "train":
            data = training_split(data, train_share, seed)
        if holdout > 0:
            data = heldout_split(data, holdout, seed)[1]
        is_min, _ = split_groups(data.group)
        out[seed] = int(is_min.sum())
    return out
