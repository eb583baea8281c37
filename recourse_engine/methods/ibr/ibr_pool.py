"""Pool variant of implicit balanced recourse: a design strategy `ibr` (e.g. `ibr:1`).

IBR's counterfactual search walks growing spheres in its group-blind latent space from
the factual's latent mean; restricted to a pool, the first sphere that reaches an
admissible pool member is the one whose latent mean is nearest. So the strategy encodes
every pool row once with an IBR fitted on the pool (group from the pool's `gender`
column, its two most frequent values; other rows are left out of training) and picks the
admissible candidates nearest to the factual in that latent space (ties at random,
distinct profiles). The fit is the strategy's `PoolFit` (`recourse_engine.strategies`): fit
ahead with `fit_pool_ibr` and `attach_pool_ibr`; without one the strategy fits it with the
defaults on first use (seconds, not milliseconds).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...encoding import normalise
from ...picks import PickRequest
from ...pool import Pool
from ...schema import FeatureSchema
from ..base import DEFAULT_GROUP_COLUMN, Layout, MethodError, pool_groups
from .ibr import IBR


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

    @property
    def n_rows(self) -> int:
        """The pool rows it encoded."""
        return self.latent.shape[0]

    def encode(self, codes: np.ndarray) -> np.ndarray:
        return self.method.latent_mean(normalise(self.method.schema, np.atleast_2d(codes)))


def fit_pool_ibr(
    schema: FeatureSchema,
    pool: Pool,
    group: np.ndarray | None = None,
    *,
    group_column: str = DEFAULT_GROUP_COLUMN,
    seed: int = 0,
    progress: bool | Callable[[int, int], None] | None = None,
    **params: Any,
) -> PoolLatent:
    """Train IBR on the pool's rows of the two groups and encode every pool row.

    `progress`: a tqdm bar (True) or a callback `progress(epochs done, epochs)` during
    training; it is not kept in the fitted model, which holds no reference to the caller.
    """
    g, _ = pool_groups(pool, group, group_column, "ibr")
    method = IBR(seed=seed, progress=progress or False, **params)
    method.schema = schema
    method.layout = Layout.of(schema)
    if not method.layout.mutable.any():
        raise MethodError("ibr: the schema has no item that may change")
    rows = g >= 0
    try:
        method._fit(_PoolRows(schema, pool.codes[rows], g[rows]))
    finally:
        method.progress = False
    return PoolLatent(method, method.latent_mean(normalise(schema, pool.codes)))


def ibr_strategy(req: PickRequest) -> list[int]:
    """Admissible candidates nearest to the factual in IBR's latent space."""
    cand = req.cand
    if len(cand) == 0:
        return []
    pl: PoolLatent = req.fitted()
    zf = pl.encode(cand.x)[0]
    return req.lowest(np.linalg.norm(pl.latent[cand.rows] - zf, axis=1))
