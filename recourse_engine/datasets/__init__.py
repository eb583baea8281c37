"""Datasets for recourse experiments (offline: nothing is downloaded at run time)."""

from .base import Dataset, DatasetError
from .fair_scenario import ScenarioDataset, fair_scenario, scenario_model, scenario_schema
from .paper import PAPER_LOADERS
from .real import LOADERS, SUBSAMPLE, data_file
from .route_scenario import RouteDataset, route_model, route_scenario, route_schema
from .synthetic import synthetic, synthetic_schema

__all__ = [
    "DATASETS",
    "Dataset",
    "DatasetError",
    "RouteDataset",
    "ScenarioDataset",
    "data_file",
    "fair_scenario",
    "load_dataset",
    "route_model",
    "route_scenario",
    "route_schema",
    "scenario_model",
    "scenario_schema",
    "synthetic",
    "synthetic_schema",
]

#: the fair-recourse scenario (`fair_scenario.py`): a fair and a deliberately biased model
SCENARIOS = {"fair_scenario": 0.0, "fair_scenario_biased": 1.0}
#: two routes to approval, one of which works for the majority only (`route_scenario.py`)
ROUTES = "fair_scenario_routes"
#: the sound real data sets (`real.py`) and the paper-style ones (`paper.py`, `*_gao2023`)
ALL_LOADERS = {**LOADERS, **PAPER_LOADERS}
DATASETS: tuple[str, ...] = ("synthetic", *SCENARIOS, ROUTES, *ALL_LOADERS)


def load_dataset(name: str, seed: int = 0, subsample: int | None = SUBSAMPLE) -> Dataset:
    """A dataset by name; the seed draws the synthetic data, or a subsample of at most
    `subsample` rows of a real one (None: all rows)."""
    if name == "synthetic":
        return synthetic(seed)
    if name in SCENARIOS:
        return fair_scenario(seed, bias=SCENARIOS[name])
    if name == ROUTES:
        return route_scenario(seed)
    if name not in ALL_LOADERS:
        raise DatasetError(f"unknown dataset {name!r}; known: {', '.join(DATASETS)}")
    data = ALL_LOADERS[name]()
    return data if subsample is None else data.subsample(subsample, seed)
