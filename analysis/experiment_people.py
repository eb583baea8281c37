"""A 95% interval for the after − before change of the segregation indices from a bootstrap
over *people* within each run, for when there are too few runs for a bootstrap over runs.

Each resample draws n people with replacement from the run's population; the same draw is
used before and after recourse (the change is paired person by person), and the original
population's minority, ε and K-Means neighbourhoods are kept, as for the reported indices.
So a resample's indices are exactly those `indices_under(X[idx], groups[idx], settings,
origin=origin)` would give (the test checks this draw by draw), but computed from the
resample's *multiplicities* in a few matrix products instead of B fresh passes over all
pairs:

* centralization: a minority member is central when the (multiplicity-weighted) minority
  members within ε of it, itself and its copies included, outnumber the majority members
  within ε; the index is the weighted central share of the minority;
* Atkinson: the weighted group counts per K-Means neighbourhood;
* average proximity: the weighted mean of exp(−distance) over minority × majority pairs.

Distances here come from scipy's `cdist`; the reported indices use exactly rounded
distances, so a pair within ~1e-12 of ε may count differently (it never did in the tests).

The interval for the mean change over R runs: the b-th resample of every run is averaged
over runs, and the 2.5% and 97.5% quantiles of those B means are taken. It measures how much
the change depends on which people happen to be in the population, with each run's decision
model and counterfactuals held fixed; it is not a run-to-run interval (`paired.interval`
gives that from 10 runs).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial.distance import cdist

from analysis.segregation.indices import IndexResult, unit_labels
from analysis.segregation.inputs import split_groups
from analysis.segregation.settings_indices import IndexSettings, threshold

INDEX_ORDER = ("centralization", "atkinson", "avg_proximity")


@dataclass(frozen=True)
class PeopleDraws:
    """B resamples of n people: `idx` (B, n) the drawn rows, `counts` (B, n) multiplicities."""

    idx: np.ndarray
    counts: np.ndarray

    @classmethod
    def draw(cls, n: int, resamples: int, seed: int) -> PeopleDraws:
        rng = np.random.default_rng([seed, 15])
        idx = rng.integers(0, n, size=(resamples, n))
        counts = np.stack([np.bincount(row, minlength=n) for row in idx]).astype(np.float64)
        return cls(idx, counts)


def resampled_indices(
    X: np.ndarray,
    groups: np.ndarray,
    settings: IndexSettings,
    origin: IndexResult,
    draws: PeopleDraws,
) -> np.ndarray:
    """(B, 3): centralization, Atkinson and average proximity of every resample of X."""
    X = np.asarray(X, dtype=np.float64)
    is_min, _ = split_groups(groups, origin.minority)
    mi, ma = np.flatnonzero(is_min), np.flatnonzero(~is_min)
    C = draws.counts
    out = np.empty((len(C), 3))
    dist = cdist(X[mi], X)  # (m, n): every minority member's distances, computed once
    out[:, 0] = _centralization(dist, is_min, mi, ma, settings, origin, draws)
    out[:, 1] = _atkinson(unit_labels(origin.kmeans, X), is_min, C)
    K = np.exp(-dist[:, ma])
    del dist
    cm, cj = C[:, mi], C[:, ma]
    out[:, 2] = np.einsum("bi,bi->b", cm @ K, cj) / (cm.sum(1) * cj.sum(1))
    return out


def _centralization(
    dist: np.ndarray,
    is_min: np.ndarray,
    mi: np.ndarray,
    ma: np.ndarray,
    settings: IndexSettings,
    origin: IndexResult,
    draws: PeopleDraws,
) -> np.ndarray:
    thr = threshold(origin.eps, settings.eps_comparison)
    C = draws.counts
    if thr is None:  # nobody within ε: no minority member is central
        return np.zeros(len(C))
    # (m, n), self at distance 0 included; float32 holds these whole counts exactly
    within = (dist <= thr).astype(np.float32)
    C32 = C.astype(np.float32)
    n_min = C32[:, mi] @ within[:, mi].T  # (B, m): weighted minority neighbours
    n_maj = C32[:, ma] @ within[:, ma].T
    central = n_min > n_maj
    if not settings.published_centralization:
        cm = C[:, mi]
        return (cm * central).sum(1) / cm.sum(1)
    # the authors' zip, on each resample in its drawn order (replicated defect (a))
    pos = np.full(len(is_min), -1)
    pos[mi] = np.arange(len(mi))
    vals = np.empty(len(C))
    for b, row in enumerate(draws.idx):
        flags = central[b, pos[row[is_min[row]]]]
        m = len(flags)
        vals[b] = np.sum(is_min[row[:m]] & flags) / m
    return vals


def _atkinson(labels: np.ndarray, is_min: np.ndarray, C: np.ndarray, b: float = 0.5) -> np.ndarray:
    _, lab = np.unique(labels, return_inverse=True)
    onehot = np.zeros((len(lab), lab.max() + 1))
    onehot[np.arange(len(lab)), lab] = 1.0
    t = C @ onehot  # (B, U) people per neighbourhood
    m = (C * is_min) @ onehot  # minority per neighbourhood
    T = t.sum(1, keepdims=True)
    P = m.sum(1, keepdims=True) / T
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(t > 0, m / np.where(t > 0, t, 1.0), 0.0)
        s = np.sum((1 - p) ** (1 - b) * p**b * t / (P * T), axis=1)
        return (1 - P[:, 0] / (1 - P[:, 0]) * np.abs(s) ** (1 / (1 - b))).astype(float)


def people_interval(per_run: list[np.ndarray], level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of the mean over runs of the b-th resampled change (each array:
    one run's B changes of one index)."""
    means = np.mean(np.stack(per_run), axis=0)
    a = (1 - level) / 2
    lo, hi = np.quantile(means, [a, 1 - a])
    return float(lo), float(hi)
