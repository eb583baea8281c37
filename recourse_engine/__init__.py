"""Pure-Python recourse engine: schemas, constraints, distances, decision models, selection.

Never imports Django; usable from a notebook or a script with no database.
"""

from .encoding import denormalise, feature_names, normalise
from .schema import (
    CONSTRAINTS,
    ITEM_TYPES,
    FeatureSchema,
    Item,
    SchemaError,
    carloan_schema,
    load_schema,
)

__all__ = [
    "CONSTRAINTS",
    "ITEM_TYPES",
    "FeatureSchema",
    "Item",
    "SchemaError",
    "carloan_schema",
    "denormalise",
    "feature_names",
    "load_schema",
    "normalise",
]
