"""Explicit balanced recourse (EBR, Gao & Lakkaraju 2023, Algorithm 1), and its pool variant.

Fit: one density model per group m of the mutable columns (normalised scale) of the rows
the decision model approves, P(x_f | m, y_hat = 1): a scikit-learn Gaussian mixture
(default) or a Gaussian KDE. Other immutable items are not conditioned on; they are held
at the factual's values (the synthetic data has none besides the group).

Sampling: rejection sampling from the product P0 * P1 — propose from P0, accept with
probability P1(x) / M where M bounds P1 from above (the sum of the component peaks), so
accepted points follow P0 * P1 exactly. The accepted pool is drawn once at fit time
because it does not depend on the factual.

Counterfactual: among samples whose product density passes beta (absolute `beta`, or the
`beta_quantile` of the sample pool's product densities) and that the model approves with
the factual's immutables, respecting up/down, the closest in L2.

Pool variant (a design strategy `ebr`, e.g. `ebr:1`): score the admissible pool members by
the same product density fitted on the pool (per value of the pool's group column) and pick
the closest (proximity) of those above the beta quantile of the pool's scores. Attach a
density to a pool with `attach_pool_density`; without one the strategy fits it from the
pool's `gender` column on first use.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.special import logsumexp

from ..design import DesignPart
from ..encoding import normalise
from ..pool import Pool
from ..schema import FeatureSchema
from ..selection import Candidates, pick_lowest, register_strategy
from .base import Layout, MethodError, PoolCache, RecourseMethod, nearest_valid, snap

DENSITIES = ("gmm", "kde")


@dataclass
class GroupDensity:
    """log P(x | m) for the two groups, with exact sampling from the normalised product."""

    estimators: tuple[Any, Any]
    kind: str

    def log_density(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.estimators[0].score_samples(x), self.estimators[1].score_samples(x)

    def log_product(self, x: np.ndarray) -> np.ndarray:
        a, b = self.log_density(x)
        return a + b

    def _log_bound(self, est: Any) -> float:
        """log of an upper bound of the density: the sum over components of their peaks."""
        if self.kind == "kde":
            d = est.tree_.data.shape[1]
            return -0.5 * d * math.log(2 * math.pi) - d * math.log(est.bandwidth_)
        d = est.means_.shape[1]
        # precisions_cholesky_: log det of the precision's Cholesky factor = -0.5 log|Sigma|
        chol = est.precisions_cholesky_
        if est.covariance_type == "full":
            logdet = np.array([np.log(np.diag(c)).sum() for c in chol])
        elif est.covariance_type == "diag":
            logdet = np.log(chol).sum(axis=1)
        elif est.covariance_type == "spherical":
            logdet = d * np.log(chol)
        else:  # tied
            logdet = np.full(len(est.weights_), np.log(np.diag(chol)).sum())
        peaks = np.log(est.weights_) - 0.5 * d * math.log(2 * math.pi) + logdet
        return float(logsumexp(peaks))

    def sample_product(self, n: int, rng: np.random.Generator, max_rounds: int = 200) -> np.ndarray:
        """n draws from P0 * P1 (normalised) by rejection; fewer if acceptance is too rare."""
        log_m = self._log_bound(self.estimators[1])
        got: list[np.ndarray] = []
        total = 0
        batch = max(4 * n, 1000)
        for _ in range(max_rounds):
            prop = _draw(self.estimators[0], batch, rng)
            accept = np.log(rng.random(batch)) < self.estimators[1].score_samples(prop) - log_m
            got.append(prop[accept])
            total += int(accept.sum())
            if total >= n:
                break
        out = np.vstack(got)
        # proposals come grouped by mixture component: shuffle before cutting to n
        return out[rng.permutation(len(out))[:n]]


def _draw(est: Any, n: int, rng: np.random.Generator) -> np.ndarray:
    seed = int(rng.integers(2**31 - 1))
    if hasattr(est, "means_"):
        est.random_state = seed
        return est.sample(n)[0]
    return est.sample(n, random_state=seed)


def fit_group_density(
    x: np.ndarray,
    group: np.ndarray,
    *,
    kind: str = "gmm",
    components: int = 3,
    bandwidth: float | str = "scott",
    seed: int = 0,
) -> GroupDensity:
    """Fit P(x | m) for m = 0, 1 on the rows of each group."""
    from sklearn.mixture import GaussianMixture
    from sklearn.neighbors import KernelDensity

    if kind not in DENSITIES:
        raise MethodError(f"unknown density {kind!r}; expected one of {', '.join(DENSITIES)}")
    ests = []
    for m in (0, 1):
        rows = x[group == m]
        if len(rows) < 2:
            raise MethodError(f"group {m} has {len(rows)} approved rows; need at least 2")
        if kind == "gmm":
            k = max(1, min(components, len(rows) // 2))
            est = GaussianMixture(k, reg_covar=1e-4, random_state=seed).fit(rows)
        else:
            est = KernelDensity(bandwidth=bandwidth).fit(rows)
        ests.append(est)
    return GroupDensity((ests[0], ests[1]), kind)


@dataclass
class EBR(RecourseMethod):
    density: str = "gmm"
    components: int = 3
    beta: float | None = None
    beta_quantile: float = 0.5
    n_samples: int = 2000
    name: str = field(default="ebr", init=False)

    def _fit(self, data: Any) -> None:
        if self.beta is None and not 0.0 <= self.beta_quantile < 1.0:
            raise MethodError(f"beta_quantile must be in [0, 1), got {self.beta_quantile}")
        if self.beta is not None and not (math.isfinite(self.beta) and self.beta >= 0):
            raise MethodError(f"beta must be a finite density >= 0, got {self.beta}")
        z = normalise(self.schema, data.codes)
        approved = np.asarray(self.model.approves(data.codes), dtype=bool)
        cols = np.flatnonzero(self.layout.mutable)
        self.cols_ = cols
        rng = np.random.default_rng(self.seed)
        self.group_density_ = fit_group_density(
            z[approved][:, cols],
            np.asarray(data.group)[approved],
            kind=self.density,
            components=self.components,
            seed=self.seed,
        )
        samples = self.group_density_.sample_product(self.n_samples, rng)
        if len(samples) == 0:
            raise MethodError(
                "ebr: rejection sampling accepted no point; the groups do not overlap"
            )
        logp = self.group_density_.log_product(samples)
        if self.beta is None:
            thr = float(np.quantile(logp, self.beta_quantile))
        else:
            thr = math.log(self.beta) if self.beta > 0 else -math.inf
        self.samples_ = samples[logp >= thr]

    def _search(self, z: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        out = np.full(z.shape, np.nan)
        if len(self.samples_) == 0:
            return out
        lay = self.layout
        fixed = ~lay.mutable
        # the model's verdict depends on the immutables: evaluate once per distinct pattern
        patterns, inverse = np.unique(np.round(z[:, fixed], 12), axis=0, return_inverse=True)
        for k in range(len(patterns)):
            rows = np.flatnonzero(inverse.ravel() == k)
            base = z[rows[0]].copy()
            cand = np.repeat(base[None, :], len(self.samples_), axis=0)
            cand[:, self.cols_] = self.samples_
            cand = snap(lay, base, cand)
            approved = self.approves_z(cand)
            ok = np.repeat(approved[None, :], len(rows), axis=0)
            zr = z[rows]
            for c in np.flatnonzero(lay.up):
                ok &= cand[None, :, c] >= zr[:, None, c] - 1e-12
            for c in np.flatnonzero(lay.down):
                ok &= cand[None, :, c] <= zr[:, None, c] + 1e-12
            picked, found = nearest_valid(zr, cand, ok)
            out[rows[found]] = picked[found]
        return out


# ---------------------------------------------------------------------------------------
# pool variant: a design strategy


@dataclass
class PoolDensity:
    """Product-density scores of every pool row and the beta threshold over them."""

    scores: np.ndarray  # (n_pool,) log P0(x) + log P1(x)
    threshold: float


_POOL_DENSITIES: PoolCache[PoolDensity] = PoolCache()
DEFAULT_GROUP_COLUMN = "gender"
DEFAULT_POOL_BETA_QUANTILE = 0.5


def fit_pool_density(
    schema: FeatureSchema,
    pool: Pool,
    group: np.ndarray | None = None,
    *,
    group_column: str = DEFAULT_GROUP_COLUMN,
    approved: np.ndarray | None = None,
    beta_quantile: float = DEFAULT_POOL_BETA_QUANTILE,
    kind: str = "gmm",
    components: int = 3,
    seed: int = 0,
) -> PoolDensity:
    """Fit the two group densities on the pool's mutable items and score every row.

    `group`: 0/1 per row (-1: in neither group, scored but not fitted on), or taken from
    the pool's `group_column`: its two most frequent values, the first in sorted order being
    0. `approved` restricts the fit to rows with y_hat = 1.
    """
    if group is None:
        if group_column not in pool.extra.columns:
            raise MethodError(f"pool has no group column {group_column!r} for the ebr strategy")
        labels = pool.extra[group_column].astype(str)
        top = labels.value_counts().index[:2].tolist()
        if len(top) != 2:
            raise MethodError(f"ebr: group column {group_column!r} holds a single value")
        a, b = sorted(top)
        group = np.where(labels == a, 0, np.where(labels == b, 1, -1))
    group = np.asarray(group)
    if group.shape != (len(pool),):
        raise MethodError(f"ebr: need one group value per pool row ({len(pool)})")
    if not 0.0 <= beta_quantile < 1.0:
        raise MethodError(f"beta_quantile must be in [0, 1), got {beta_quantile}")
    lay = Layout.of(schema)
    z = normalise(schema, pool.codes)[:, lay.mutable]
    fit_rows = group >= 0
    if approved is not None:
        fit_rows &= np.asarray(approved, dtype=bool)
    dens = fit_group_density(
        z[fit_rows], group[fit_rows], kind=kind, components=components, seed=seed
    )
    scores = dens.log_product(z)
    return PoolDensity(scores, float(np.quantile(scores, beta_quantile)))


def attach_pool_density(pool: Pool, density: PoolDensity) -> None:
    """Use `density` whenever the `ebr` strategy selects from `pool`."""
    if density.scores.shape != (len(pool),):
        raise MethodError("pool density has a different number of rows than the pool")
    _POOL_DENSITIES.put(pool, density)


def pool_density(schema: FeatureSchema, pool: Pool) -> PoolDensity:
    cached = _POOL_DENSITIES.get(pool)
    if cached is not None:
        return cached
    density = fit_pool_density(schema, pool)
    attach_pool_density(pool, density)
    return density


def ebr_strategy(
    cand: Candidates,
    part: DesignPart,
    rng: np.random.Generator,
    available: np.ndarray,
    picked: list[int],
) -> list[int]:
    """Closest (proximity, random ties) admissible candidates whose product density passes
    the pool's beta threshold."""
    dens = pool_density(cand.schema, cand.pool)
    above = dens.scores[cand.rows] >= dens.threshold
    return pick_lowest(cand, cand.proximity, available & above, part.k, rng)


register_strategy("ebr", ebr_strategy)
