"""Pure-Python recourse engine: schemas, constraints, distances, decision models, selection.

Never imports Django; usable from a notebook or a script with no database.

The names below are loaded on first use (PEP 562): `from recourse_engine import parse_design`
imports the design module alone, not pandas, scipy and joblib with the rest. Every process of
the study platform (a command, a web or a worker process) imports this package while Django
starts, and most need only a part of it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .constraints import constraint_mask, violations
    from .decision import (
        DecisionModel,
        IncomeRule,
        ModelError,
        SklearnModel,
        TorchMLP,
        load_model,
        rejects_factual,
        save_model,
        train_sklearn_model,
        train_torch_mlp,
    )
    from .design import Design, DesignError, DesignPart, parse_design
    from .distances import get_distance, item_costs, l2, linf, mad_l1, proximity, sparsity, weighted
    from .encoding import denormalise, feature_names, normalise
    from .pool import Pool, PoolError, pool_from_frame, profile_codes, read_pool_csv
    from .schema import (
        CONSTRAINTS,
        ITEM_TYPES,
        FeatureSchema,
        Item,
        SchemaError,
        carloan_schema,
        load_schema,
    )
    from .selection import (
        Pick,
        PoolIndex,
        Selection,
        select_many,
        select_recourses,
    )
    from .strategies import (
        STRATEGIES,
        PoolFit,
        Strategy,
        StrategyError,
        design_strategies,
        generating_strategies,
        get_strategy,
        method_names,
        pool_fit_strategies,
        pool_strategies,
    )
    from .synth import synth_pool

#: each public name -> the module that defines it
_HOME = {
    "constraint_mask": "constraints",
    "violations": "constraints",
    "DecisionModel": "decision",
    "IncomeRule": "decision",
    "ModelError": "decision",
    "SklearnModel": "decision",
    "TorchMLP": "decision",
    "load_model": "decision",
    "rejects_factual": "decision",
    "save_model": "decision",
    "train_sklearn_model": "decision",
    "train_torch_mlp": "decision",
    "Design": "design",
    "DesignError": "design",
    "DesignPart": "design",
    "parse_design": "design",
    "get_distance": "distances",
    "item_costs": "distances",
    "l2": "distances",
    "linf": "distances",
    "mad_l1": "distances",
    "proximity": "distances",
    "sparsity": "distances",
    "weighted": "distances",
    "denormalise": "encoding",
    "feature_names": "encoding",
    "normalise": "encoding",
    "Pool": "pool",
    "PoolError": "pool",
    "pool_from_frame": "pool",
    "profile_codes": "pool",
    "read_pool_csv": "pool",
    "CONSTRAINTS": "schema",
    "FeatureSchema": "schema",
    "ITEM_TYPES": "schema",
    "Item": "schema",
    "SchemaError": "schema",
    "carloan_schema": "schema",
    "load_schema": "schema",
    "Pick": "selection",
    "PoolIndex": "selection",
    "Selection": "selection",
    "select_many": "selection",
    "select_recourses": "selection",
    "PoolFit": "strategies",
    "STRATEGIES": "strategies",
    "Strategy": "strategies",
    "StrategyError": "strategies",
    "design_strategies": "strategies",
    "generating_strategies": "strategies",
    "get_strategy": "strategies",
    "method_names": "strategies",
    "pool_fit_strategies": "strategies",
    "pool_strategies": "strategies",
    "synth_pool": "synth",
}

__all__ = [
    "CONSTRAINTS",
    "ITEM_TYPES",
    "STRATEGIES",
    "DecisionModel",
    "Design",
    "DesignError",
    "DesignPart",
    "FeatureSchema",
    "IncomeRule",
    "Item",
    "ModelError",
    "Pick",
    "Pool",
    "PoolError",
    "PoolFit",
    "PoolIndex",
    "SchemaError",
    "Selection",
    "SklearnModel",
    "Strategy",
    "StrategyError",
    "TorchMLP",
    "carloan_schema",
    "constraint_mask",
    "denormalise",
    "design_strategies",
    "generating_strategies",
    "feature_names",
    "get_distance",
    "get_strategy",
    "item_costs",
    "l2",
    "linf",
    "load_model",
    "load_schema",
    "mad_l1",
    "method_names",
    "normalise",
    "parse_design",
    "pool_fit_strategies",
    "pool_strategies",
    "pool_from_frame",
    "profile_codes",
    "proximity",
    "read_pool_csv",
    "rejects_factual",
    "save_model",
    "select_many",
    "select_recourses",
    "sparsity",
    "synth_pool",
    "train_sklearn_model",
    "train_torch_mlp",
    "violations",
    "weighted",
]


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
