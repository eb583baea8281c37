"""Recourse methods behind one interface (`RecourseMethod.fit` / `get_counterfactuals`).

Importing this package also registers the `ebr` and `ibr` design strategies (the pool
variants of balanced recourse), so a study design may name `ebr:k` or `ibr:k`.
"""

from __future__ import annotations

from typing import Any

from .base import CounterfactualResult, Layout, MethodError, RecourseMethod
from .causal import AdditiveSCM, CausalRecourse
from .cchvae import CCHVAE, IBR
from .cruds import CRUDS
from .ebr import EBR, attach_pool_density, fit_pool_density
from .growing_spheres import GrowingSpheres
from .ibr_pool import attach_pool_ibr, fit_pool_ibr
from .store import load_method, save_method
from .wachter import Wachter

METHODS: dict[str, type[RecourseMethod]] = {
    "wachter": Wachter,
    "gs": GrowingSpheres,
    "ebr": EBR,
    "ibr": IBR,
    "cchvae": CCHVAE,
    "cruds": CRUDS,
    "causal": CausalRecourse,
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
