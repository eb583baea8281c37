"""Every strategy the engine knows, in one explicit table: the pool strategies a study design
may name and the recourse methods of `recourse_engine.methods`, by name.

Designs, the selection and the study app all look names up here, so nothing registers itself
as a side effect of an import and nothing is discovered by importing modules. The parts that
need scipy, scikit-learn or torch (the balanced strategies' picks and fits, the method
classes) are imported when first used, so `import recourse_engine` and a plain design such as
`sparsest:1,random:3` stay light.

An entry with a pool `pick` chooses among the study's pool profiles. An entry that
`generates` names the recourse method whose counterfactual for the participant's own profile
is shown (`recourse_engine.generated`); every method generates under its own name, except
EBR and IBR, whose names pick from the pool (as studies have always read them), so their
generating variants are `ebr_generated` and `ibr_generated`. A method added to the table
with `generates` is a study strategy with no other change: what it needs of a study (a group
column, a structural model, a gradient) it declares on its own class
(`RecourseMethod.capabilities`). A `pool_fit` is a model fitted once on the study's pool
before the strategy picks (EBR's densities, IBR's encoder), and it also keeps the fits in use
per pool; its `format` names the layout of the fitted object, and `recourse_engine.fit_store`
refuses a stored fit of another format.
"""

from __future__ import annotations

import importlib
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from . import picks
from .picks import PickFn

if TYPE_CHECKING:
    from .methods.base import RecourseMethod
    from .pool import Pool
    from .schema import FeatureSchema


class StrategyError(ValueError):
    """A name that is not in the strategy table; the message lists the known ones."""


class FitFn(Protocol):
    def __call__(
        self,
        schema: FeatureSchema,
        pool: Pool,
        *,
        progress: Callable[[int, int], None] | None = None,
        **params: Any,
    ) -> Any: ...


@dataclass(frozen=True)
class PoolFit:
    """A model fitted on the pool before a strategy picks from it, and the fits in use.

    `fit(schema, pool, *, progress=None, **params)` returns the fitted object, which says how
    many pool rows it was fitted on (`n_rows`); `progress`, when given, is called as
    `progress(done, total)` and is never kept in the result. `attach(pool, fitted)` makes
    the strategy use `fitted` whenever it selects from `pool` (`mismatch` is what it says
    of a fit of another number of rows); `fitted(schema, pool)` is what the strategy's pick
    reads (`PickRequest.fitted`): the attached fit, or one fitted with the defaults on first
    use and attached. A fit is kept while its pool object lives: pools are unhashable
    dataclasses, so fits are keyed by id and confirmed by a weak reference, and a new pool
    that reuses a dead pool's id never gets the old fit. `format` changes whenever the
    fitted object's classes or layout change, so stale stored fits are refitted.
    """

    fit: FitFn
    format: str
    mismatch: str
    _fits: dict[int, tuple[weakref.ref, Any]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def attached(self, pool: Pool) -> Any | None:
        """The fit attached to `pool`, if any."""
        entry = self._fits.get(id(pool))
        return entry[1] if entry is not None and entry[0]() is pool else None

    def attach(self, pool: Pool, fitted: Any) -> None:
        if fitted.n_rows != len(pool):
            from .methods.base import MethodError

            raise MethodError(self.mismatch)
        self._fits[id(pool)] = (weakref.ref(pool), fitted)

    def fitted(self, schema: FeatureSchema, pool: Pool) -> Any:
        """The fit attached to `pool`, or one fitted with the defaults and attached."""
        value = self.attached(pool)
        if value is None:
            value = self.fit(schema, pool)
            self.attach(pool, value)
        return value


@dataclass(frozen=True)
class Strategy:
    """One named strategy.

    `distance`: the distance the strategy ranks by (`sparsest`: sparsity); with `ranked`,
    the default of a distance the design may name (`lowest_cost@l2`). `load_method`
    returns the recourse method class of that name, imported on first use; `generates`
    names the method whose counterfactual a design part of this name shows.
    """

    name: str
    summary: str
    pick: PickFn | None = None
    distance: str | None = None
    ranked: bool = False
    load_method: Callable[[], type[RecourseMethod]] | None = None
    pool_fit: PoolFit | None = None
    generates: str | None = None

    @property
    def in_design(self) -> bool:
        """Whether a study design may name it."""
        return self.pick is not None or self.generates is not None

    @property
    def method(self) -> type[RecourseMethod] | None:
        """The recourse method class of this name, if it is one."""
        return None if self.load_method is None else self.load_method()


# ---------------------------------------------------------------------------------------
# the heavy parts, imported on first use


def _lazy(module: str, name: str) -> Callable[[], Any]:
    """A loader of `module`'s `name` that imports the module only when called, so that
    reading the table loads neither torch nor the methods."""

    def load() -> Any:
        return getattr(importlib.import_module(module, __package__), name)

    return load


def _lazy_call(module: str, name: str) -> Callable[..., Any]:
    """`module`'s function `name`, imported on its first call."""
    load = _lazy(module, name)

    def call(*args: Any, **kwargs: Any) -> Any:
        return load()(*args, **kwargs)

    return call


# ---------------------------------------------------------------------------------------
# the table

_ALL = (
    Strategy("sparsest", "the fewest changed items", picks.lowest_cost, distance="sparsity"),
    Strategy(
        "proximate", "the smallest normalised L1 change", picks.lowest_cost, distance="proximity"
    ),
    Strategy(
        "lowest_cost",
        "the lowest cost under a distance the design names (default proximity)",
        picks.lowest_cost,
        distance="proximity",
        ranked=True,
    ),
    Strategy(
        "diverse",
        "greedy max-min distance among the cheapest candidates",
        picks.diverse,
        distance="proximity",
        ranked=True,
    ),
    Strategy("random", "uniformly at random", picks.uniform),
    Strategy(
        "robust",
        "the lowest cost (under a distance the design names, default proximity) among the "
        "plans approved by every model of the study's set (multi-wave studies), the cheapest "
        "others only when too few are",
        picks.robust_lowest,
        distance="proximity",
        ranked=True,
    ),
    Strategy(
        "wachter",
        "Wachter et al. (2017): gradient descent on approval loss plus L1 distance",
        load_method=_lazy(".methods.wachter", "Wachter"),
        generates="wachter",
    ),
    Strategy(
        "gs",
        "Growing Spheres (Laugel et al., 2017): random search in growing layers",
        load_method=_lazy(".methods.growing_spheres", "GrowingSpheres"),
        generates="gs",
    ),
    Strategy(
        "ebr",
        "explicit balanced recourse (Gao & Lakkaraju 2023); in a design: the closest pool "
        "profile whose product of the two groups' densities passes beta",
        _lazy_call(".methods.ebr.ebr_pool", "ebr_strategy"),
        load_method=_lazy(".methods.ebr.ebr", "EBR"),
        pool_fit=PoolFit(
            _lazy_call(".methods.ebr.ebr_pool", "fit_pool_density"),
            "ebr-pool/3",
            "pool density has a different number of rows than the pool",
        ),
    ),
    Strategy(
        "ibr",
        "implicit balanced recourse (Gao & Lakkaraju 2023); in a design: the pool profile "
        "nearest in IBR's group-blind latent space",
        _lazy_call(".methods.ibr.ibr_pool", "ibr_strategy"),
        load_method=_lazy(".methods.ibr.ibr", "IBR"),
        pool_fit=PoolFit(
            _lazy_call(".methods.ibr.ibr_pool", "fit_pool_ibr"),
            "ibr-pool/3",
            "pool IBR was encoded on a different number of rows than the pool",
        ),
    ),
    Strategy(
        "ebr_generated",
        "explicit balanced recourse generated for the participant's own profile (the method "
        "`ebr`, fitted on the study's pool)",
        generates="ebr",
    ),
    Strategy(
        "ibr_generated",
        "implicit balanced recourse generated for the participant's own profile (the method "
        "`ibr`, fitted on the study's pool)",
        generates="ibr",
    ),
    Strategy(
        "cchvae",
        "CCHVAE (Pawelczyk et al., 2020): growing spheres in a conditional VAE's latent space",
        load_method=_lazy(".methods.cchvae", "CCHVAE"),
        generates="cchvae",
    ),
    Strategy(
        "cruds",
        "CRUDS (Downs et al., 2020): draws from a conditional subspace VAE",
        load_method=_lazy(".methods.cruds", "CRUDS"),
        generates="cruds",
    ),
    Strategy(
        "causal",
        "causal recourse (Karimi et al., 2020b): least interventions in an additive SCM",
        load_method=_lazy(".methods.causal", "CausalRecourse"),
        generates="causal",
    ),
    Strategy(
        "fair_rl",
        "Fair recourse for all (arXiv 2601.20449): a Soft Actor-Critic policy whose reward adds "
        "individual, group or hybrid (EE-ECR) fairness terms",
        load_method=_lazy(".methods.fair_rl.fair_rl", "FairRL"),
        generates="fair_rl",
    ),
)

#: read-only: a strategy is added to the table above, never at run time
STRATEGIES: Mapping[str, Strategy] = MappingProxyType({s.name: s for s in _ALL})


def get_strategy(name: str) -> Strategy:
    try:
        return STRATEGIES[name]
    except KeyError:
        raise StrategyError(
            f"unknown strategy {name!r}; known: {', '.join(sorted(STRATEGIES))}"
        ) from None


def design_strategies() -> list[str]:
    """Names a study design may use (pool strategies and generating methods), sorted."""
    return sorted(s.name for s in _ALL if s.in_design)


def pool_strategies() -> list[str]:
    """Names that pick from the study's pool, sorted."""
    return sorted(s.name for s in _ALL if s.pick is not None)


def generating_strategies() -> list[str]:
    """Names that show a method's generated counterfactual, sorted."""
    return sorted(s.name for s in _ALL if s.generates is not None)


def method_names() -> list[str]:
    """Names of the recourse methods, in table order."""
    return [s.name for s in _ALL if s.load_method is not None]


def pool_fit_strategies() -> list[str]:
    """Names of the strategies that need a model fitted on the pool, sorted."""
    return sorted(s.name for s in _ALL if s.pool_fit is not None)
