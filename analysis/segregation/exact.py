"""The exact computation of each index in the catalogue (`catalogue`), and the population
they read.

`Population` holds what several indices share, each part computed at most once, on first use:
ε (given, or the quantile of minority distances), the minority neighbour counts within ε, the
cross pass over minority × majority pairs and the K-Means neighbourhoods. The cross pass is
fused: it yields what every wanted index declared it reads (its `passes`), so centralization
and average proximity together still walk the pairs once.

An index's exact computation is a function of a `Population` returning a float; it may read
`X` and `is_min` directly when it needs none of the shared passes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from .epsilon import find_eps
from .geometry import Geometry, make_geometry
from .inputs import SegregationInputError
from .passes import counts_from_bracket, cross_pass, minority_within_counts

#: what the cross pass can yield: per minority member the majority members within ε, and
#: the sum of exp(−distance) over minority × majority pairs
CROSS_COUNTS, CROSS_PROXIMITY = "cross_counts", "cross_proximity"


def fit_units(X: np.ndarray, clusters: int = 30, seed: int = 0) -> Any:
    """KMeans neighbourhoods fitted on the (original) population (sklearn's defaults,
    one k-means++ initialisation seeded by `seed`)."""
    from sklearn.cluster import KMeans

    if clusters < 1:
        raise SegregationInputError(f"clusters must be >= 1, got {clusters}")
    distinct = len(np.unique(X, axis=0)) if len(X) <= 200_000 else len(X)
    if clusters > distinct:
        raise SegregationInputError(
            f"{clusters} clusters requested but the population has only {distinct} distinct "
            "profiles; lower --clusters"
        )
    return KMeans(n_clusters=clusters, random_state=seed, n_init=1).fit(X)


def unit_labels(kmeans: Any, X: np.ndarray) -> np.ndarray:
    """Neighbourhood of each profile under a fitted KMeans (the original population's)."""
    return kmeans.predict(np.asarray(X, dtype=np.float64))


def atkinson(is_minority: np.ndarray, units: Any, b: float = 0.5) -> float:
    """Atkinson index over neighbourhood labels (empty neighbourhoods do not count)."""
    is_min = np.asarray(is_minority, dtype=bool)
    _, lab = np.unique(np.asarray(units), return_inverse=True)
    t = np.bincount(lab).astype(float)
    mi = np.bincount(lab, weights=is_min.astype(float))
    T, P = t.sum(), is_min.mean()
    if not 0 < P < 1:
        raise SegregationInputError("Atkinson needs members of both groups")
    p = mi / t
    s = np.sum((1 - p) ** (1 - b) * p**b * t / (P * T))
    return float(1 - P / (1 - P) * abs(s) ** (1 / (1 - b)))


@dataclass
class Groups:
    """A population's profiles `X` (n, d) and who is in the minority (`is_min`, n)."""

    X: np.ndarray
    is_min: np.ndarray

    @cached_property
    def idx_min(self) -> np.ndarray:
        return np.flatnonzero(self.is_min)

    @cached_property
    def idx_maj(self) -> np.ndarray:
        return np.flatnonzero(~self.is_min)


@dataclass
class Population(Groups):
    """One population with a binary group, and the passes over it its indices share."""

    ops: Any
    passes: frozenset[str]  # what the wanted indices read from the cross pass
    eps_given: float | None = None
    eps_quantile: float = 0.2
    eps_pairs: str = "distinct"
    units: Any = None
    kmeans: Any = None
    clusters: int = 30
    seed: int = 0
    _eps: tuple[float, Any] | None = field(default=None, repr=False)
    _cross: tuple[np.ndarray | None, float] | None = field(default=None, repr=False)

    @cached_property
    def geo(self) -> Geometry:
        return make_geometry(self.X)

    def eps(self) -> float:
        """ε: the given one, else the quantile of minority distances (found once)."""
        if self.eps_given is not None:
            return float(self.eps_given)
        if self._eps is None:
            self._eps = find_eps(
                self.ops, self.geo, self.idx_min, self.eps_quantile, self.eps_pairs, self.seed
            )
        return self._eps[0]

    def known_eps(self) -> float:
        """ε as reported: given or found by now, else NaN (no index needed it)."""
        if self.eps_given is not None:
            return float(self.eps_given)
        return math.nan if self._eps is None else self._eps[0]

    def minority_within(self) -> np.ndarray:
        """Per minority member, the other minority members within ε (from ε's own bracket
        pass where it suffices)."""
        eps = self.eps()
        bracket = None if self._eps is None else self._eps[1]
        counts = None
        if bracket is not None:
            counts = counts_from_bracket(self.geo, self.idx_min, bracket, eps)
        if counts is None:
            counts = minority_within_counts(self.ops, self.geo, self.idx_min, eps)
        return counts

    def cross(self) -> tuple[np.ndarray | None, float]:
        """(majority members within ε per minority member, Σ exp(−distance) over minority ×
        majority pairs), each only where a wanted index declared it; one pass for both."""
        if self._cross is None:
            eps = self.eps() if CROSS_COUNTS in self.passes else None
            self._cross = cross_pass(
                self.ops,
                self.geo,
                self.idx_min,
                self.idx_maj,
                eps,
                CROSS_PROXIMITY in self.passes,
            )
        return self._cross

    def unit_labels(self) -> np.ndarray:
        """The neighbourhood of each member: the given labels, else the K-Means units
        (the given K-Means, or one fitted here and kept in `kmeans`)."""
        if self.units is not None:
            lab = np.asarray(self.units)
            if len(lab) != len(self.X):
                raise SegregationInputError(f"{len(self.X)} profiles but {len(lab)} unit labels")
            return lab
        if self.kmeans is None:
            self.kmeans = fit_units(self.X, self.clusters, self.seed)
        return unit_labels(self.kmeans, self.X)


def centralization_exact(pop: Population) -> float:
    """The central share of the minority: members with more minority than majority members
    within ε (themselves included)."""
    n_min_in = 1 + pop.minority_within()
    n_maj_in, _ = pop.cross()
    assert n_maj_in is not None, "centralization reads the cross pass's counts"
    return float(np.mean(n_min_in > n_maj_in))


def atkinson_exact(pop: Population) -> float:
    return atkinson(pop.is_min, pop.unit_labels())


def avg_proximity_exact(pop: Population) -> float:
    """Mean of exp(−distance) over minority × majority pairs."""
    _, psum = pop.cross()
    return psum / (len(pop.idx_min) * len(pop.idx_maj))
