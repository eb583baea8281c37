"""Datasets for recourse experiments (offline: nothing is downloaded at run time)."""

from .base import Dataset, DatasetError
from .real import LOADERS, SUBSAMPLE, data_file
from .synthetic import synthetic, synthetic_schema

__all__ = [
    "DATASETS",
    "Dataset",
    "DatasetError",
    "data_file",
    "load_dataset",
    "synthetic",
    "synthetic_schema",
]

DATASETS: tuple[str, ...] = ("synthetic", *LOADERS)


def load_dataset(name: str, seed: int = 0, subsample: int | None = SUBSAMPLE) -> Dataset:
    """A dataset by name; the seed draws the synthetic data, or a subsample of at most
    `subsample` rows of a real one (None: all rows)."""
    if name == "synthetic":
        return synthetic(seed)
    if name not in LOADERS:
        raise DatasetError(f"unknown dataset {name!r}; known: {', '.join(DATASETS)}")
    data = LOADERS[name]()
    return data if subsample is None else data.subsample(subsample, seed)
