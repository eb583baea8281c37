"""Each catalogue index on B resamples of one population at once, from the resamples'
*multiplicities* in a few matrix products instead of B fresh passes over all pairs (the
bootstrap over people of `analysis.experiment.people`).

A resample draws n people with replacement; the original population's minority, ε and
K-Means neighbourhoods are kept, so a resample's index is exactly what the exact computation
gives on `X[idx]` (tested draw by draw). An index's resampled computation is a function of
`Resamples` returning one value per resample, shape (B,):

* centralization: a minority member is central when the (multiplicity-weighted) minority
  members within ε of it, itself and its copies included, outnumber the majority members
  within ε; the index is the weighted central share of the minority;
* Atkinson: the weighted group counts per K-Means neighbourhood;
* average proximity: the weighted mean of exp(−distance) over minority × majority pairs.

Distances here come from scipy's `cdist`; the exact indices use exactly rounded distances, so
a pair within ~1e-12 of ε may count differently (it never did in the tests).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from scipy.spatial.distance import cdist

from .epsilon import threshold
from .exact import Groups, unit_labels


@dataclass
class Resamples(Groups):
    """B resamples of a population: `idx` (B, n) the drawn rows, `counts` (B, n) their
    multiplicities; ε, K-Means, ε comparison and the published-centralization defect are
    the original population's settings."""

    idx: np.ndarray
    counts: np.ndarray
    eps: float
    kmeans: Any
    eps_comparison: str = "<="
    published_centralization: bool = False

    @cached_property
    def dist(self) -> np.ndarray:
        """(m, n): every minority member's distances, computed once."""
        return cdist(self.X[self.idx_min], self.X)


def multiplicities(rows: np.ndarray, n: int) -> np.ndarray:
    """(B, n) float counts of each of n people in each of the B drawn rows (B, n)."""
    counts = np.zeros((len(rows), n))
    for b, row in enumerate(rows):
        counts[b] = np.bincount(row, minlength=n)
    return counts


def centralization_resampled(rs: Resamples) -> np.ndarray:
    thr = threshold(rs.eps, rs.eps_comparison)
    C = rs.counts
    if thr is None:  # nobody within ε: no minority member is central
        return np.zeros(len(C))
    mi, ma = rs.idx_min, rs.idx_maj
    # (m, n), self at distance 0 included; float32 holds these whole counts exactly
    within = (rs.dist <= thr).astype(np.float32)
    C32 = C.astype(np.float32)
    n_min = C32[:, mi] @ within[:, mi].T  # (B, m): weighted minority neighbours
    n_maj = C32[:, ma] @ within[:, ma].T
    central = n_min > n_maj
    if not rs.published_centralization:
        cm = C[:, mi]
        return (cm * central).sum(1) / cm.sum(1)
    # the authors' zip, on each resample in its drawn order (replicated defect (a))
    is_min = rs.is_min
    pos = np.full(len(is_min), -1)
    pos[mi] = np.arange(len(mi))
    vals = np.empty(len(C))
    for b, row in enumerate(rs.idx):
        flags = central[b, pos[row[is_min[row]]]]
        m = len(flags)
        vals[b] = np.sum(is_min[row[:m]] & flags) / m
    return vals


def atkinson_resampled(rs: Resamples, b: float = 0.5) -> np.ndarray:
    _, lab = np.unique(unit_labels(rs.kmeans, rs.X), return_inverse=True)
    C = rs.counts
    onehot = np.zeros((len(lab), lab.max() + 1))
    onehot[np.arange(len(lab)), lab] = 1.0
    t = C @ onehot  # (B, U) people per neighbourhood
    m = (C * rs.is_min) @ onehot  # minority per neighbourhood
    T = t.sum(1, keepdims=True)
    P = m.sum(1, keepdims=True) / T
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(t > 0, m / np.where(t > 0, t, 1.0), 0.0)
        s = np.sum((1 - p) ** (1 - b) * p**b * t / (P * T), axis=1)
        return (1 - P[:, 0] / (1 - P[:, 0]) * np.abs(s) ** (1 / (1 - b))).astype(float)


def avg_proximity_resampled(rs: Resamples) -> np.ndarray:
    K = np.exp(-rs.dist[:, rs.idx_maj])
    cm, cj = rs.counts[:, rs.idx_min], rs.counts[:, rs.idx_maj]
    return np.einsum("bi,bi->b", cm @ K, cj) / (cm.sum(1) * cj.sum(1))
