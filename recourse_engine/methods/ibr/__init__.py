"""Implicit balanced recourse: the method (`ibr`) and its pool variant, the design strategy
`ibr` (`ibr_pool`)."""

from .ibr import IBR
from .ibr_pool import PoolLatent, fit_pool_ibr

__all__ = ["IBR", "PoolLatent", "fit_pool_ibr"]
