"""Recourse methods behind one interface (`RecourseMethod.fit` / `get_counterfactuals`).

The names are those of the engine's one strategy table (`recourse_engine.strategies`),
which also holds the pool variants of EBR and IBR that a study design may name; `METHODS`
is read from it, so a method is added in one place. A method of one module is a module
here (`wachter`, `cchvae`, ...); one of several is a folder (`ebr/`, `ibr/`, `fair_rl/`),
as CARLA's catalogue has it. What a method needs of a study it declares on its class
(`capabilities`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ..strategies import STRATEGIES, PoolFit
from .base import CounterfactualResult, Layout, MethodError, RecourseMethod
from .capabilities import Capabilities

if TYPE_CHECKING:
    from ..pool import Pool
    from .causal import AdditiveSCM, CausalRecourse
    from .cchvae import CCHVAE
    from .cruds import CRUDS
    from .ebr import EBR, PoolDensity, fit_pool_density
    from .growing_spheres import GrowingSpheres
    from .ibr import IBR, PoolLatent, fit_pool_ibr
    from .store import load_method, save_method
    from .wachter import Wachter

#: the names imported on first use (PEP 562) and their modules: a process that only reads
#: the base class or the table (the study site's web and command processes) loads neither
#: scipy nor torch
_LAZY = {
    "AdditiveSCM": ".causal",
    "CausalRecourse": ".causal",
    "CCHVAE": ".cchvae",
    "CRUDS": ".cruds",
    "EBR": ".ebr",
    "PoolDensity": ".ebr",
    "fit_pool_density": ".ebr",
    "GrowingSpheres": ".growing_spheres",
    "IBR": ".ibr",
    "PoolLatent": ".ibr",
    "fit_pool_ibr": ".ibr",
    "load_method": ".store",
    "save_method": ".store",
    "Wachter": ".wachter",
}


def __getattr__(name: str) -> Any:
    if name == "METHODS":
        value: Any = _methods()
    elif name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def _methods() -> dict[str, type[RecourseMethod]]:
    """`METHODS`: the recourse methods by short name, in the strategy table's order."""
    return {s.name: s.method for s in STRATEGIES.values() if s.method is not None}


def get_method(name: str, **params: Any) -> RecourseMethod:
    """A fresh, unfitted method by its short name."""
    try:
        cls = __getattr__("METHODS")[name]
    except KeyError:
        known = ", ".join(__getattr__("METHODS"))
        raise MethodError(f"unknown method {name!r}; known: {known}") from None
    return cls(**params)


def _pool_fit(strategy: str) -> PoolFit:
    pool_fit = STRATEGIES[strategy].pool_fit
    assert pool_fit is not None
    return pool_fit


def attach_pool_density(pool: Pool, density: PoolDensity) -> None:
    """Use `density` whenever the `ebr` strategy selects from `pool`."""
    _pool_fit("ebr").attach(pool, density)


def attach_pool_ibr(pool: Pool, latent: PoolLatent) -> None:
    """Use `latent` whenever the `ibr` strategy selects from `pool`."""
    _pool_fit("ibr").attach(pool, latent)


__all__ = [
    "CCHVAE",
    "AdditiveSCM",
    "Capabilities",
    "CausalRecourse",
    "CRUDS",
    "EBR",
    "IBR",
    "METHODS",
    "CounterfactualResult",
    "GrowingSpheres",
    "Layout",
    "MethodError",
    "RecourseMethod",
    "Wachter",
    "attach_pool_density",
    "attach_pool_ibr",
    "fit_pool_density",
    "fit_pool_ibr",
    "get_method",
    "load_method",
    "save_method",
]
