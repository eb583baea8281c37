"""The segregation indices, one record each, in one table that every consumer iterates: the
exact indices of a population (`indices.segregation_indices`), the study's effects, tables and
figures (`effects`, `frames`, `report`), the experiment's runs, paired differences, bootstrap
over people and reports (`analysis.experiment`), and the command lines. A new index is one
entry here plus its two computations; none of those places names an index.

Each record says how the index reads (`label`, `short`), which way is worse
(`worse_if_higher`), how it is computed exactly on a population (`exact`, on an
`exact.Population`) and on B resamples of one at once (`resampled`, on a
`resampled.Resamples`), and which parts of the shared cross pass its exact computation reads
(`passes`, so that the pass is walked once for all of them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .exact import (
    CROSS_COUNTS,
    CROSS_PROXIMITY,
    Population,
    atkinson_exact,
    avg_proximity_exact,
    centralization_exact,
)
from .inputs import SegregationInputError
from .resampled import (
    Resamples,
    atkinson_resampled,
    avg_proximity_resampled,
    centralization_resampled,
)

VERDICTS = ("worse", "better", "no clear change")


@dataclass(frozen=True)
class SegregationIndex:
    name: str  # the key in every table, file and JSON
    label: str  # "Atkinson index"
    short: str  # "Atk.", a table column
    worse_if_higher: bool  # larger is more segregated
    exact: Callable[[Population], float]
    resampled: Callable[[Resamples], np.ndarray]
    passes: frozenset[str] = frozenset()  # of exact.CROSS_COUNTS, exact.CROSS_PROXIMITY

    @property
    def title(self) -> str:
        """The label with the direction: "Atkinson index (higher = more segregated)"."""
        return f"{self.label} ({'higher' if self.worse_if_higher else 'lower'} = more segregated)"

    def is_worse(self, change: float | np.ndarray) -> bool | np.ndarray:
        """Whether a change (after − before) moved the segregated way; a point estimate."""
        return change > 0 if self.worse_if_higher else change < 0

    def verdict(self, lo: float, hi: float) -> str:
        """Worse or better only when the interval [lo, hi] of the change excludes 0 on that
        side, else (also for a NaN bound) "no clear change"."""
        if lo > 0:
            return "worse" if self.worse_if_higher else "better"
        if hi < 0:
            return "better" if self.worse_if_higher else "worse"
        return "no clear change"


CATALOGUE: dict[str, SegregationIndex] = {
    ix.name: ix
    for ix in (
        SegregationIndex(
            "centralization",
            "Centralization",
            "centr.",
            True,
            centralization_exact,
            centralization_resampled,
            frozenset({CROSS_COUNTS}),
        ),
        SegregationIndex(
            "atkinson", "Atkinson index", "Atk.", True, atkinson_exact, atkinson_resampled
        ),
        SegregationIndex(
            "avg_proximity",
            "Average proximity",
            "prox.",
            False,
            avg_proximity_exact,
            avg_proximity_resampled,
            frozenset({CROSS_PROXIMITY}),
        ),
    )
}


def names() -> tuple[str, ...]:
    """The index names, in the catalogue's order (the order of every table's columns)."""
    return tuple(CATALOGUE)


def index(name: str) -> SegregationIndex:
    """The record of index `name`; an unknown name is refused with the known ones."""
    if name not in CATALOGUE:
        known = ", ".join(CATALOGUE)
        raise SegregationInputError(f"unknown segregation index {name!r}; known: {known}")
    return CATALOGUE[name]


def resampled_values(rs: Resamples) -> np.ndarray:
    """(B, k): every catalogue index on each of the B resamples, columns in this order."""
    return np.column_stack([ix.resampled(rs) for ix in CATALOGUE.values()])
