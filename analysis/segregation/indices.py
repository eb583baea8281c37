"""Exact segregation indices of a population with a binary group, in memory-bounded blocks.

Why our own code: the seed paper's indices were too slow beyond 10,000 people (it
subsampled), and segregation libraries such as PySAL's `segregation` measure areal
units with geometries, not point clouds in feature space. Here every index is
computed on all pairs, block by block, with memory that does not grow with n²
(numpy threads on the CPU, or torch on a GPU); scikit-learn supplies KMeans.

Exactness. Block distances come from one matrix product of augmented vectors
(|a|² − 2a·b + |b|²), which is fast but carries rounding error. Wherever that
error could change a result — a pair within `tol` of a threshold (ε, a quantile
bracket) or a pair so close that sqrt amplifies the error — the distance is
recomputed with the *canonical* formula `canonical_distances`: squared coordinate
differences sorted ascending and summed left to right, then sqrt. The canonical
formula is symmetric and ignores the order of coordinates, so ties stay ties.
`tol` is a rigorous bound on the product's error (see `geometry`). Hence the
centralization and ε are bitwise those of the canonical formula; in the average
proximity each pair's distance errs by at most 5·tol (~1e-12 on the normalised
item scale, where |x − mean|² is at most a few units).

Definitions (minority = the smaller group unless named):
* average spatial proximity: mean of exp(−‖x_i − x_j‖) over minority × majority pairs;
* centralization: ε = q-quantile (numpy's linear interpolation) of the distances of
  distinct minority pairs (`eps_pairs="distinct"`, q = 0.2), or — as in the authors'
  code — of all ordered minority pairs *including* each member with itself
  (`eps_pairs="ordered_with_self"`, used there with q = 0.1). A minority member is
  central when minority members are more than half of all members within ε of it
  (itself included); the index is the central share of the minority;
* Atkinson (b = 0.5, Massey–Denton): 1 − P/(1−P)·|Σ_i (1−p_i)^{1−b} p_i^b t_i/(P·T)|^{1/(1−b)}
  over neighbourhoods (KMeans with 30 clusters fitted on the population, or labels).

This module holds the public functions; the work is split by concern: `inputs` (checks),
`geometry` (block products and their error bound), `backends` (numpy / torch kernels),
`passes` (blocked passes over pairs) and `epsilon` (the ε order statistic).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .backends import Progress, make_ops
from .epsilon import EPS_PAIRS, EpsPairs, find_eps, minority_eps
from .geometry import canonical_distances, make_geometry
from .inputs import SegregationInputError, as_population, split_groups
from .passes import counts_from_bracket, cross_pass, minority_within_counts

__all__ = [
    "EPS_PAIRS",
    "EpsPairs",
    "IndexResult",
    "Progress",
    "SegregationInputError",
    "as_population",
    "atkinson",
    "avg_proximity",
    "canonical_distances",
    "centralization",
    "fit_units",
    "make_ops",
    "minority_eps",
    "segregation_indices",
    "split_groups",
    "unit_labels",
]


@dataclass
class IndexResult:
    n: int
    n_minority: int
    minority: Any
    eps: float
    centralization: float
    atkinson: float
    avg_proximity: float
    kmeans: Any = field(default=None, repr=False)

    def to_frame(self) -> Any:
        """One row: n, n_minority, minority, eps and the three indices (a pandas frame)."""
        from .frames import index_frame

        return index_frame(self)

    def _repr_html_(self) -> str:
        return self.to_frame().to_html(index=False)

    def to_json(self) -> dict[str, Any]:
        minority = self.minority.item() if isinstance(self.minority, np.generic) else self.minority
        return {
            "n": int(self.n),
            "minority": minority,
            "eps": float(self.eps),
            "centralization": float(self.centralization),
            "atkinson": float(self.atkinson),
            "avg_proximity": float(self.avg_proximity),
        }


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


def centralization(
    X: Any,
    groups: Any,
    eps: float | None = None,
    *,
    minority: Any = None,
    eps_quantile: float = 0.2,
    eps_pairs: EpsPairs = "distinct",
    backend: str = "numpy",
    device: str | None = None,
    n_jobs: int | None = None,
) -> float:
    r = segregation_indices(
        X,
        groups,
        minority=minority,
        eps=eps,
        eps_quantile=eps_quantile,
        eps_pairs=eps_pairs,
        backend=backend,
        device=device,
        n_jobs=n_jobs,
        want=("centralization",),
    )
    return r.centralization


def avg_proximity(
    X: Any,
    groups: Any,
    *,
    minority: Any = None,
    backend: str = "numpy",
    device: str | None = None,
    n_jobs: int | None = None,
) -> float:
    r = segregation_indices(
        X,
        groups,
        minority=minority,
        backend=backend,
        device=device,
        n_jobs=n_jobs,
        want=("avg_proximity",),
    )
    return r.avg_proximity


def segregation_indices(
    X: Any,
    groups: Any,
    *,
    minority: Any = None,
    eps: float | None = None,
    eps_quantile: float = 0.2,
    eps_pairs: EpsPairs = "distinct",
    units: Any = None,
    kmeans: Any = None,
    clusters: int = 30,
    seed: int = 0,
    backend: str = "numpy",
    device: str | None = None,
    n_jobs: int | None = None,
    want: Sequence[str] = ("centralization", "atkinson", "avg_proximity"),
    progress: Progress | None = None,
) -> IndexResult:
    """All three indices, fused so that each pair is visited as few times as possible.

    For a post-recourse population pass the original's `eps` and `kmeans` (from its
    IndexResult) and its `minority`, so that neighbourhoods stay those of the original.
    """
    Xa = as_population(X)
    is_min, label = split_groups(groups, minority)
    if len(is_min) != len(Xa):
        raise SegregationInputError(f"{len(Xa)} profiles but {len(is_min)} group labels")
    if eps is not None and not (math.isfinite(eps) and eps >= 0):
        raise SegregationInputError(f"eps must be a finite number >= 0, got {eps}")
    if not 0.0 <= eps_quantile <= 1.0:
        raise SegregationInputError(f"eps quantile must be in [0, 1], got {eps_quantile}")
    atk, km = math.nan, kmeans
    if "atkinson" in want:
        if units is not None:
            lab = np.asarray(units)
            if len(lab) != len(Xa):
                raise SegregationInputError(f"{len(Xa)} profiles but {len(lab)} unit labels")
        else:
            km = km if km is not None else fit_units(Xa, clusters, seed)
            lab = unit_labels(km, Xa)
        atk = atkinson(is_min, lab)
    ops = make_ops(backend, device, n_jobs)
    ops.progress = progress
    geo = make_geometry(Xa)
    idx_min, idx_maj = np.flatnonzero(is_min), np.flatnonzero(~is_min)

    cen, prox, eps_v = math.nan, math.nan, math.nan if eps is None else float(eps)
    if "centralization" in want:
        counts = None
        if eps is None:
            eps_v, bracket = find_eps(ops, geo, idx_min, eps_quantile, eps_pairs, seed)
            if bracket is not None:
                counts = counts_from_bracket(geo, idx_min, bracket, eps_v)
        if counts is None:
            counts = minority_within_counts(ops, geo, idx_min, eps_v)
        n_min_in = 1 + counts
    n_maj_in, psum = None, math.nan
    if "centralization" in want or "avg_proximity" in want:
        n_maj_in, psum = cross_pass(
            ops,
            geo,
            idx_min,
            idx_maj,
            eps_v if "centralization" in want else None,
            "avg_proximity" in want,
        )
    if "centralization" in want:
        cen = float(np.mean(n_min_in > n_maj_in))
    if "avg_proximity" in want:
        prox = psum / (len(idx_min) * len(idx_maj))

    return IndexResult(
        n=len(Xa),
        n_minority=len(idx_min),
        minority=label,
        eps=eps_v,
        centralization=cen,
        atkinson=atk,
        avg_proximity=prox,
        kmeans=km,
    )
