"""The segregation indices under named settings: ε pairs and comparison, K-Means starts,
and — only when asked — the authors' published centralization formula.

`segregation_indices` (in `indices`) counts a neighbour when its distance is `<= ε` and fits
K-Means with one start. The authors' code (`utils_recourse.py` of
ruijiang81/Balanced-Recourse) differs in three places, each a setting here:

* `eps_comparison="<"`: a neighbour counts when its distance is *strictly* below ε. For
  floating-point distances d, `d < ε` is `d <= nextafter(ε, −∞)`, so the exact passes of
  `indices` are reused with that threshold; ε itself (reported, and reused after
  recourse) stays the quantile. With ε = 0 nobody, not even oneself, is within ε, so no
  minority member is central (the authors' 0/0 is NaN, and NaN > 0.5 is false);
* `kmeans_inits`: K-Means starts (scikit-learn's `n_init`; the authors' scikit-learn of
  2021 defaulted to 10), seeded by `kmeans_seed` (theirs: `random_state=0`);
* `published_centralization=True` — a *defect*, for matching published numbers only:
  the authors count `sum(i == minority and j for i, j in zip(sens, central))`, pairing the
  k-th person of the whole population with the k-th minority member's flag, so the count
  depends on who happens to stand in the first m rows (`published_centralization_value`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .backends import make_ops
from .catalogue import CATALOGUE
from .epsilon import EPS_PAIRS, minority_eps, threshold
from .geometry import make_geometry
from .indices import IndexResult, segregation_indices, unit_labels
from .inputs import SegregationInputError, as_population, split_groups
from .passes import cross_pass, minority_within_counts

COMPARISONS = ("<=", "<")


@dataclass(frozen=True)
class IndexSettings:
    eps_quantile: float = 0.2
    eps_pairs: str = "distinct"
    eps_comparison: str = "<="
    clusters: int = 30
    kmeans_inits: int = 1
    kmeans_seed: int | None = None  # None: the run's seed
    published_centralization: bool = False

    def __post_init__(self) -> None:
        if self.eps_pairs not in EPS_PAIRS:
            raise SegregationInputError(f"eps pairs must be one of {', '.join(EPS_PAIRS)}")
        if self.eps_comparison not in COMPARISONS:
            raise SegregationInputError(f"eps comparison must be one of {', '.join(COMPARISONS)}")
        if not 0.0 <= self.eps_quantile <= 1.0:
            raise SegregationInputError(f"eps quantile must be in [0, 1], got {self.eps_quantile}")
        if self.clusters < 1 or self.kmeans_inits < 1:
            raise SegregationInputError("clusters and K-Means starts must be >= 1")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def fit_kmeans(X: np.ndarray, clusters: int, inits: int, seed: int) -> Any:
    """K-Means neighbourhoods on the (original) population with `inits` seeded starts."""
    from sklearn.cluster import KMeans

    distinct = len(np.unique(X, axis=0)) if len(X) <= 200_000 else len(X)
    if clusters > distinct:
        raise SegregationInputError(
            f"{clusters} clusters requested but the population has only {distinct} distinct "
            "profiles; lower the clusters"
        )
    return KMeans(n_clusters=clusters, random_state=seed, n_init=inits).fit(X)


def central_flags(X: np.ndarray, is_min: np.ndarray, thr: float | None) -> np.ndarray:
    """Per minority member (in population order): central when minority members are more
    than half of everyone within `thr` (`<=`) of it, itself included."""
    idx_min, idx_maj = np.flatnonzero(is_min), np.flatnonzero(~is_min)
    if thr is None:
        return np.zeros(len(idx_min), dtype=bool)
    ops = make_ops("numpy", None, None)
    geo = make_geometry(X)
    n_min_in = 1 + minority_within_counts(ops, geo, idx_min, thr)
    n_maj_in, _ = cross_pass(ops, geo, idx_min, idx_maj, thr, False)
    assert n_maj_in is not None
    return n_min_in > n_maj_in


def published_centralization_value(is_min: np.ndarray, central: np.ndarray) -> float:
    """The authors' count: the k-th person's group paired with the k-th minority flag."""
    m = len(central)
    hits = np.asarray(is_min, dtype=bool)[:m] & np.asarray(central, dtype=bool)
    return float(hits.sum() / m)


def indices_under(
    X: Any,
    groups: Any,
    settings: IndexSettings,
    *,
    origin: IndexResult | None = None,
    seed: int = 0,
    memo: Any = None,
) -> IndexResult:
    """The catalogue's indices under `settings`. For a post-recourse population pass the
    original's IndexResult as `origin`: its minority, ε and K-Means are reused. `memo` (an
    `analysis.experiment.memo.RunMemo`): the original's K-Means and ε, keyed by the
    population and the settings they depend on, shared between settings."""
    Xa = as_population(X)
    minority = None if origin is None else origin.minority
    is_min, _ = split_groups(groups, minority)
    if origin is None:
        from analysis.experiment.memo import digest, memoised

        km_seed = seed if settings.kmeans_seed is None else settings.kmeans_seed
        pop = digest(Xa, is_min)
        km = memoised(
            memo,
            ("kmeans", pop, settings.clusters, settings.kmeans_inits, km_seed),
            lambda: fit_kmeans(Xa, settings.clusters, settings.kmeans_inits, km_seed),
        )
        eps = memoised(
            memo,
            ("eps", pop, settings.eps_quantile, settings.eps_pairs),
            lambda: minority_eps(Xa, is_min, settings.eps_quantile, settings.eps_pairs),  # type: ignore[arg-type]
        )
    else:
        km, eps = origin.kmeans, origin.eps
    thr = threshold(eps, settings.eps_comparison)
    kw: dict[str, Any] = {"minority": minority, "kmeans": km, "seed": seed}
    if thr is not None:
        res = segregation_indices(Xa, groups, eps=thr, **kw)
    else:  # nobody is within ε, so no minority member is central
        want = [name for name in CATALOGUE if name != "centralization"]
        res = segregation_indices(Xa, groups, want=want, **kw)
        res.values["centralization"] = 0.0
    res.eps = float(eps)
    if settings.published_centralization:
        central = central_flags(Xa, is_min, thr)
        res.values["centralization"] = published_centralization_value(is_min, central)
    return res


def unit_labels_of(result: IndexResult, X: np.ndarray) -> np.ndarray:
    """Neighbourhood labels of X under a result's K-Means (for checks and reports)."""
    return unit_labels(result.kmeans, X)
