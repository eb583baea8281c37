"""A dataset for recourse experiments: a schema, item codes, the true label and the group."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..pool import Pool
from ..schema import FeatureSchema


class DatasetError(ValueError):
    """A dataset that cannot be loaded or built; the message names the file or parameter."""


@dataclass
class Dataset:
    """`codes` (n, d) are item codes of `schema`; `y` the 0/1 outcome; `group` the 0/1
    membership of the sensitive attribute `sensitive` (an item of the schema, `fixed`)."""

    name: str
    schema: FeatureSchema
    codes: np.ndarray
    y: np.ndarray
    group: np.ndarray
    sensitive: str
    group_labels: tuple[str, str] = ("0", "1")

    def __post_init__(self) -> None:
        n = len(self.codes)
        if self.codes.shape != (n, self.schema.d):
            raise DatasetError(f"{self.name}: codes must be (n, {self.schema.d})")
        if self.y.shape != (n,) or self.group.shape != (n,):
            raise DatasetError(f"{self.name}: y and group need one value per row ({n})")
        if self.schema.item(self.sensitive).constraint != "fixed":
            raise DatasetError(f"{self.name}: sensitive item {self.sensitive!r} must be fixed")

    def __len__(self) -> int:
        return len(self.codes)

    def as_pool(self) -> Pool:
        """The rows as a Pool (for yNN neighbours and pool strategies)."""
        import pandas as pd

        extra = pd.DataFrame({"y": self.y, "group": self.group})
        return Pool(
            schema_hash=self.schema.hash(),
            ids=np.array([f"r{i}" for i in range(len(self))]),
            codes=np.asarray(self.codes, dtype=float),
            income=None,
            extra=extra,
        )

    def subsample(self, n: int, seed: int) -> Dataset:
        """n rows drawn without replacement (the paper samples 10,000 rows of large sets)."""
        if n >= len(self):
            return self
        idx = np.sort(np.random.default_rng(seed).choice(len(self), n, replace=False))
        return Dataset(
            self.name,
            self.schema,
            self.codes[idx],
            self.y[idx],
            self.group[idx],
            self.sensitive,
            self.group_labels,
        )
