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

This module holds the public functions; the work is split by concern: `catalogue` (the
indices, one record each), `exact` (each index's computation and the passes they share),
`inputs` (checks), `geometry` (block products and their error bound), `backends` (numpy /
torch kernels), `passes` (blocked passes over pairs) and `epsilon` (the ε order statistic).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .backends import Progress, make_ops
from .catalogue import CATALOGUE, index
from .epsilon import EPS_PAIRS, EpsPairs, minority_eps
from .exact import Population, atkinson, fit_units, unit_labels
from .geometry import canonical_distances
from .inputs import SegregationInputError, as_population, split_groups

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
    """n, the minority, ε and the value of every catalogue index (NaN: not computed); an
    index reads as an attribute too (`result.atkinson`)."""

    n: int
    n_minority: int
    minority: Any
    eps: float
    values: dict[str, float]
    kmeans: Any = field(default=None, repr=False)

    def __getattr__(self, name: str) -> float:
        values = self.__dict__.get("values")
        if values is not None and name in values:
            return values[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def to_frame(self) -> Any:
        """One row: n, n_minority, minority, eps and the indices (a pandas frame)."""
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
            **{k: float(v) for k, v in self.values.items()},
        }


def centralization(X: Any, groups: Any, eps: float | None = None, **options: Any) -> float:
    """Centralization alone (`options`: those of `segregation_indices`)."""
    r = segregation_indices(X, groups, eps=eps, want=("centralization",), **options)
    return r.values["centralization"]


def avg_proximity(X: Any, groups: Any, **options: Any) -> float:
    """Average spatial proximity alone (`options`: those of `segregation_indices`)."""
    r = segregation_indices(X, groups, want=("avg_proximity",), **options)
    return r.values["avg_proximity"]


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
    want: Sequence[str] | None = None,
    progress: Progress | None = None,
) -> IndexResult:
    """The catalogue's indices (`want`: some of them by name; default all), fused so that
    each pair is visited as few times as possible.

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
    asked = {index(name).name for name in (CATALOGUE if want is None else want)}
    wanted = [ix for ix in CATALOGUE.values() if ix.name in asked]
    ops = make_ops(backend, device, n_jobs)
    ops.progress = progress
    pop = Population(
        Xa,
        is_min,
        ops,
        frozenset().union(*(ix.passes for ix in wanted)),
        eps_given=eps,
        eps_quantile=eps_quantile,
        eps_pairs=eps_pairs,
        units=units,
        kmeans=kmeans,
        clusters=clusters,
        seed=seed,
    )
    values = dict.fromkeys(CATALOGUE, math.nan)
    for ix in wanted:
        values[ix.name] = ix.exact(pop)
    return IndexResult(
        n=len(Xa),
        n_minority=len(pop.idx_min),
        minority=label,
        eps=pop.known_eps(),
        values=values,
        kmeans=pop.kmeans,
    )
