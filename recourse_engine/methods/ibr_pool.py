"""Pool variant of implicit balanced recourse: a design strategy `ibr` (e.g. `ibr:1`).

IBR's counterfactual search walks growing spheres in its group-blind latent space from
the factual's latent mean; restricted to a pool, the first sphere that reaches an
admissible pool member is the one whose latent mean is nearest. So the strategy encodes
every pool row once with an IBR fitted on the pool (group from the pool's `gender`
column, its two most frequent values; other rows are left out of training) and picks the
admissible candidates nearest to the factual in that latent space (ties at random,
distinct profiles). Fit ahead with `fit_pool_ibr` and `attach_pool_ibr`; without one the
strategy fits it with the defaults on first use (seconds, not milliseconds).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..design import DesignPart
from ..encoding import normalise
from ..pool import Pool
from ..schema import FeatureSchema
from ..selection import Candidates, pick_lowest, register_strategy
from .base import Layout, MethodError, PoolCache
from .cchvae import IBR
from .ebr import DEFAULT_GROUP_COLUMN


@dataclass
class _PoolRows:
    """What IBR's training reads from a dataset; a pool has no sensitive item."""

    schema: FeatureSchema
    codes: np.ndarray
    group: np.ndarray
    sensitive: str | None = None


@dataclass
class PoolLatent:
    method: IBR
    latent: np.ndarray  # (n_pool, k) latent means of the pool rows

    def encode(self, codes: np.ndarray) -> np.ndarray:
        return self.method.latent_mean(normalise(self.method.schema, np.atleast_2d(codes)))


def _groups(pool: Pool, group: np.ndarray | None, column: str) -> np.ndarray:
    if group is not None:
        g = np.asarray(group)
        if g.shape != (len(pool),):
            raise MethodError(f"ibr: need one group value per pool row ({len(pool)})")
        return g
    if column not in pool.extra.columns:
        raise MethodError(f"pool has no group column {column!r} for the ibr strategy")
    labels = pool.extra[column].astype(str)
    top = labels.value_counts().index[:2].tolist()
    if len(top) != 2:
        raise MethodError(f"ibr: group column {column!r} holds a single value")
    a, b = sorted(top)
    return np.where(labels == a, 0, np.where(labels == b, 1, -1))


def fit_pool_ibr(
    schema: FeatureSchema,
    pool: Pool,
    group: np.ndarray | None = None,
    *,
    group_column: str = DEFAULT_GROUP_COLUMN,
    seed: int = 0,
    **params: Any,
) -> PoolLatent:
    """Train IBR on the pool's rows of the two groups and encode every pool row."""
    g = _groups(pool, group, group_column)
    method = IBR(seed=seed, **params)
    method.schema = schema
    method.layout = Layout.of(schema)
    if not method.layout.mutable.any():
        raise MethodError("ibr: the schema has no item that may change")
    rows = g >= 0
    method._fit(_PoolRows(schema, pool.codes[rows], g[rows]))
    return PoolLatent(method, method.latent_mean(normalise(schema, pool.codes)))


_POOL_LATENTS: PoolCache[PoolLatent] = PoolCache()


def attach_pool_ibr(pool: Pool, latent: PoolLatent) -> None:
    if latent.latent.shape[0] != len(pool):
        raise MethodError("pool IBR was encoded on a different number of rows than the pool")
    _POOL_LATENTS.put(pool, latent)


def pool_ibr(schema: FeatureSchema, pool: Pool) -> PoolLatent:
    cached = _POOL_LATENTS.get(pool)
    if cached is not None:
        return cached
    latent = fit_pool_ibr(schema, pool)
    attach_pool_ibr(pool, latent)
    return latent


def ibr_strategy(
    cand: Candidates,
    part: DesignPart,
    rng: np.random.Generator,
    available: np.ndarray,
    picked: list[int],
) -> list[int]:
    """Admissible candidates nearest to the factual in IBR's latent space."""
    if len(cand) == 0:
        return []
    pl = pool_ibr(cand.schema, cand.pool)
    zf = pl.encode(cand.x)[0]
    dist = np.linalg.norm(pl.latent[cand.rows] - zf, axis=1)
    return pick_lowest(cand, dist, available, part.k, rng)


register_strategy("ibr", ibr_strategy)
