"""Segregation indices (exact, memory-bounded) and the segregation effects of recourses shown.

`catalogue` is the table of indices (centralization, the Atkinson index, average spatial
proximity), one record each, that every report iterates; `indices` computes them on full
populations; `toy` holds the seed paper's toy models and the Hausdorff-form Segregation
Index; `effects` applies the recourses of a study export; `report` writes the HTML + PNG
report.
"""

from .catalogue import CATALOGUE, SegregationIndex
from .frames import EffectsResult, curves_frame, effects_frame, index_frame
from .indices import (
    IndexResult,
    SegregationInputError,
    atkinson,
    avg_proximity,
    centralization,
    minority_eps,
    segregation_indices,
    split_groups,
)

__all__ = [
    "CATALOGUE",
    "EffectsResult",
    "IndexResult",
    "SegregationIndex",
    "SegregationInputError",
    "atkinson",
    "avg_proximity",
    "centralization",
    "curves_frame",
    "effects_frame",
    "index_frame",
    "minority_eps",
    "segregation_indices",
    "split_groups",
]
