"""Recourse methods behind one interface (`RecourseMethod.fit` / `get_counterfactuals`).

The names are those of the engine's one strategy table (`recourse_engine.strategies`),
which also holds the pool variants of EBR and IBR that a study design may name; `METHODS`
is read from it, so a method is added in one place.
"""

from __future__ import annotations

from typing import Any

from ..strategies import STRATEGIES
from .base import CounterfactualResult, Layout, MethodError, RecourseMethod
from .causal import AdditiveSCM, CausalRecourse
from .cchvae import CCHVAE, IBR
from .cruds import CRUDS
from .ebr import EBR, attach_pool_density, fit_pool_density
from .growing_spheres import GrowingSpheres
from .ibr_pool import attach_pool_ibr, fit_pool_ibr
from .store import load_method, save_method
from .wachter import Wachter

#: the recourse methods by short name, in the strategy table's order
METHODS: dict[str, type[RecourseMethod]] = {
    s.name: s.method for s in STRATEGIES.values() if s.method is not None
}


def get_method(name: str, **params: Any) -> RecourseMethod:
    """A fresh, unfitted method by its short name."""
    try:
        cls = METHODS[name]
    except KeyError:
        raise MethodError(f"unknown method {name!r}; known: {', '.join(METHODS)}") from None
    return cls(**params)


__all__ = [
    "CCHVAE",
    "AdditiveSCM",
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
