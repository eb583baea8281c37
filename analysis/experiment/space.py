"""Where people live for the segregation indices: the index space and its scaling, and the
population (all rows, or the training split).

* `index_space="all"`: every normalised column but the sensitive item's (immutables
  included); `"mutable"`: the mutable items' columns only (the authors' `mutable_feature`).
* `scaling="clipped"`: the schema's normalised scale (real data clipped at the 1st/99th
  percentiles when loaded); `"minmax"`: each column rescaled to [0, 1] over the *sample*'s
  range (`ref`, the rows loaded for the run, before any split: CARLA fits its MinMax scaler
  on the whole sample). Normalisation is affine per numeric or ordinal column, so min–max of
  the normalised column is min–max of the item's values as loaded; the paper-style loaders
  (`*_gao2023`) do not clip, so there it is the raw range.
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

import numpy as np

from recourse_engine import normalise
from recourse_engine.datasets import Dataset
from recourse_engine.methods import Layout


def index_columns(data: Dataset, space: str) -> np.ndarray:
    """Normalised columns that the indices see."""
    lay = Layout.of(data.schema)
    keep = np.ones(lay.p, dtype=bool)
    keep[lay.columns_of([data.sensitive])] = False
    if space == "mutable":
        keep &= lay.mutable
    cols = np.flatnonzero(keep)
    if not len(cols):
        raise ValueError(f"{data.name}: no column in index space {space!r}")
    return cols


def index_features(
    data: Dataset, codes: np.ndarray, space: str, scaling: str, ref: np.ndarray | None = None
) -> np.ndarray:
    """The population's coordinates in the index space (rows of `codes`)."""
    cols = index_columns(data, space)
    z = normalise(data.schema, codes)[:, cols]
    if scaling == "clipped":
        return z
    r = normalise(data.schema, codes if ref is None else ref)[:, cols]
    lo, hi = r.min(axis=0), r.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return (z - lo) / span


def mutable_in_space(data: Dataset, space: str) -> np.ndarray:
    """Which index-space columns are mutable (the ones a zero-filled row loses)."""
    return Layout.of(data.schema).mutable[index_columns(data, space)]


def training_split(data: Dataset, share: float, seed: int) -> Dataset:
    """A seeded `share` of the rows (CARLA's train_test_split keeps 75% for training)."""
    n = len(data)
    keep = np.sort(np.random.default_rng([seed, 75]).permutation(n)[: int(round(share * n))])
    return dataclasses.replace(data, codes=data.codes[keep], y=data.y[keep], group=data.group[keep])


def _take(data: Dataset, rows: np.ndarray) -> Dataset:
    changes: dict[str, Any] = {
        "codes": data.codes[rows],
        "y": data.y[rows],
        "group": data.group[rows],
    }
    extra = getattr(data, "extra", None)
    if extra is not None:
        changes["extra"] = extra.iloc[rows].reset_index(drop=True)
    return dataclasses.replace(data, **changes)


def heldout_split(data: Dataset, share: float, seed: int) -> tuple[Dataset, Dataset, dict]:
    """(training part, held-out part, record) with a seeded `share` held out."""
    n = len(data)
    perm = np.random.default_rng([seed, 29]).permutation(n)
    k = int(round(share * n))
    test, train = np.sort(perm[:k]), np.sort(perm[k:])
    record = {
        "seed": seed,
        "holdout": share,
        "n_train": int(len(train)),
        "n_test": int(len(test)),
        "test_rows_sha256": hashlib.sha256(test.astype(np.int64).tobytes()).hexdigest(),
        "test_rows": test,
    }
    return _take(data, train), _take(data, test), record


def population_features(data: Dataset, codes: np.ndarray) -> np.ndarray:
    """Normalised features without the sensitive item's columns: where people live."""
    z = normalise(data.schema, codes)
    sens = Layout.of(data.schema).columns_of([data.sensitive])
    return np.delete(z, sens, axis=1)
