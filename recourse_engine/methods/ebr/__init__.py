"""Explicit balanced recourse: the method (`ebr`), its group densities (`densities`) and its
pool variant, the design strategy `ebr` (`ebr_pool`)."""

from .ebr import EBR
from .ebr_pool import PoolDensity, fit_pool_density

__all__ = ["EBR", "PoolDensity", "fit_pool_density"]
