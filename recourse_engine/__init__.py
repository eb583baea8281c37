"""Pure-Python recourse engine: schemas, constraints, distances, decision models, selection.

Never imports Django; usable from a notebook or a script with no database.
"""

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
