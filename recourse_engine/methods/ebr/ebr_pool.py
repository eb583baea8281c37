"""The pool variant of explicit balanced recourse: a design strategy `ebr` (e.g. `ebr:1`).

It scores pool rows by the product density of `ebr.EBR`, fitted on the pool (groups from
the pool's `gender` column, or any other column or fixed item named by `group_column`), and
picks the closest (proximity) admissible candidate above the beta quantile of the pool's
scores. When the schema has fixed items the scores are conditional on the factual's
immutables (every admissible candidate shares them), the quantile is taken over all pool
rows scored at that pattern, and the scores are cached per pattern; without fixed items (the
car-loan schema) they are computed once at fit. The fit is the strategy's `PoolFit`
(`recourse_engine.strategies`): attach one to a pool with `attach_pool_density`; without one
the strategy fits it with the defaults on first use.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...encoding import normalise
from ...picks import PickRequest
from ...pool import Pool
from ...schema import FeatureSchema
from ..base import DEFAULT_GROUP_COLUMN, Layout, MethodError, pattern_key, pool_groups
from .densities import GroupDensity, fit_group_density


@dataclass
class PoolDensity:
    """Product-density scores of the pool rows and the beta threshold over them.

    Without conditioning (`density` None) `scores` / `threshold` are fixed at fit time. With
    fixed items, `scores_at(x_c)` scores every pool row's x_f at the factual's immutables
    x_c and takes the beta quantile over those scores; results are cached per pattern.
    """

    scores: np.ndarray | None  # (n_pool,) log P0(x_f) + log P1(x_f), unconditional fits
    threshold: float | None
    beta_quantile: float = 0.5
    n_rows: int = 0
    density: GroupDensity | None = None
    zf: np.ndarray | None = None  # (n_pool, df) the pool rows' mutable columns
    cond_cols: np.ndarray = field(default_factory=lambda: np.array([], dtype=int))
    _cache: OrderedDict = field(default_factory=OrderedDict, repr=False, compare=False)

    #: patterns whose pool scores are kept
    CACHE_SIZE = 256

    def __post_init__(self) -> None:
        if self.n_rows == 0 and self.scores is not None:
            self.n_rows = len(self.scores)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_cache"] = OrderedDict()
        return state

    @property
    def conditional(self) -> bool:
        return self.density is not None

    def scores_at(self, xc: np.ndarray | None = None) -> tuple[np.ndarray, float]:
        """(scores of every pool row, threshold) at the immutable pattern x_c."""
        if self.density is None:
            assert self.scores is not None and self.threshold is not None
            return self.scores, self.threshold
        xc = np.zeros(0) if xc is None else np.asarray(xc, dtype=float).ravel()
        key = pattern_key(xc)
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        assert self.zf is not None
        scores = self.density.log_product(self.zf, xc)
        value = (scores, float(np.quantile(scores, self.beta_quantile)))
        self._cache[key] = value
        while len(self._cache) > self.CACHE_SIZE:
            self._cache.popitem(last=False)
        return value

    def scores_for(self, schema: FeatureSchema, x: np.ndarray) -> tuple[np.ndarray, float]:
        """(scores, threshold) for a factual given as item codes."""
        if self.density is None:
            return self.scores_at()
        z = normalise(schema, np.atleast_2d(np.asarray(x, dtype=float)))[0]
        return self.scores_at(z[self.cond_cols])


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
    condition: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> PoolDensity:
    """Fit the two group densities on the pool (mutable items, conditioned on the fixed
    items other than the group's) and score the rows.

    `group`: 0/1 per row (-1: in neither group, scored but not fitted on), or taken from
    the pool's `group_column` (an extra column or a schema item): its two most frequent
    values, the first in sorted order being 0. `approved` restricts the fit to rows with
    y_hat = 1. `progress(1, 1)` is called once the fit is done.
    """
    group, group_item = pool_groups(pool, group, group_column, "ebr", schema)
    if not 0.0 <= beta_quantile < 1.0:
        raise MethodError(f"beta_quantile must be in [0, 1), got {beta_quantile}")
    lay = Layout.of(schema)
    z = normalise(schema, pool.codes)
    zf = z[:, lay.mutable]
    fixed = np.flatnonzero(~lay.mutable)
    skip = lay.columns_of([group_item]) if group_item is not None else []
    cond_cols = np.setdiff1d(fixed, skip).astype(int) if condition else np.array([], dtype=int)
    fit_rows = group >= 0
    if approved is not None:
        fit_rows &= np.asarray(approved, dtype=bool)
    dens = fit_group_density(
        zf[fit_rows],
        group[fit_rows],
        z[fit_rows][:, cond_cols],
        kind=kind,
        components=components,
        seed=seed,
    )
    if len(cond_cols) == 0:
        scores = dens.log_product(zf)
        fitted = PoolDensity(scores, float(np.quantile(scores, beta_quantile)), beta_quantile)
    else:
        fitted = PoolDensity(
            None, None, beta_quantile, len(pool), density=dens, zf=zf, cond_cols=cond_cols
        )
    if progress is not None:
        progress(1, 1)
    return fitted


def ebr_strategy(req: PickRequest) -> list[int]:
    """Closest (proximity, random ties) admissible candidates whose product density passes
    the beta threshold (at the factual's immutables when the schema has fixed items)."""
    cand = req.cand
    dens: PoolDensity = req.fitted()
    scores, threshold = dens.scores_for(cand.schema, cand.x)
    return req.lowest(cand.proximity, among=scores[cand.rows] >= threshold)
