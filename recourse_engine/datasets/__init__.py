"""Datasets for recourse experiments (offline: nothing is downloaded at run time)."""

from .base import Dataset, DatasetError
from .synthetic import synthetic, synthetic_schema

__all__ = ["Dataset", "DatasetError", "load_dataset", "synthetic", "synthetic_schema"]

DATASETS = ("synthetic",)


def load_dataset(name: str, seed: int = 0) -> Dataset:
    """A dataset by name; the seed draws the synthetic data (or a subsample of a real one)."""
    if name == "synthetic":
        return synthetic(seed)
    raise DatasetError(f"unknown dataset {name!r}; known: {', '.join(DATASETS)}")
