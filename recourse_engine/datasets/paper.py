"""Data sets prepared as Gao & Lakkaraju (ICML 2023) prepare them, beside the sound versions
in `real.py` (DATASETS.md says where each differs):

* `german_gao2023` — UCI German credit with the paper's Appendix C split: 8 mutable
  features, the two categorical ones (employment time, job) kept as ordinal items, and
  the 12 immutable UCI attributes (the personal-status attribute gives sex, the group,
  and marital status, a fixed item of its own); no clipping. The authors' public code does
  not cover German, so this follows the paper's text.
* `gmc_gao2023` — Give Me Some Credit as CARLA's `give_me_some_credit` catalog prepares it
  (`carla-recourse/cf-data`, `process/give_me_some_credit.py`), which the authors load
  (`main_impacted_data.py`, lines 47–50): rows with a missing value dropped, rows with any
  |z-score| >= 3 over the ten numeric columns dropped (population z-scores, as
  `scipy.stats.zscore`), the label flipped so that 1 is "no serious delinquency"; then the
  authors' group: age above the median (strictly), age itself not a feature. No clipping.

The paper's Law file (Kusner et al.'s `law_data.csv`: region, sander index, first-year
grade; 21,791 rows) is not shipped by any package this project can install, so there is
no `law_gao2023`; `law_sex`/`law_race` read the LSAC bar-passage file (DATASETS.md).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from ..schema import load_schema
from .base import Dataset, DatasetError
from .real import GMC_MUTABLE, _read

#: the ordered levels of German credit's categorical mutables (virny's labels)
EMPLOYMENT = ("unemployed", "<1 years", "1<= < 4 years", "4<= <7 years", ">=7 years")
JOB = (
    "unemployed/ unskilled  - non-resident",
    "unskilled - resident",
    "skilled employee / official",
    "management/ highly qualified employee",
)
GERMAN_NUMERIC_MUTABLE = (
    "duration",
    "credit-amount",
    "installment-rate",
    "residence-since",
    "existing-credits",
    "number-people-provide-maintenance-for",
)
GERMAN_CATEGORICAL_FIXED = (
    "checking-account",
    "credit-history",
    "purpose",
    "savings-account",
    "other-debtors",
    "property",
    "other-installment",
    "housing",
)
GERMAN_BINARY_FIXED = ("telephone", "foreign-worker", "marital-status")
#: the file's numeric columns in its own order (age second)
GMC_NUMERIC = (GMC_MUTABLE[0], "age", *GMC_MUTABLE[1:])


def _key(name: str) -> str:
    return name.replace("-", "_").replace(" ", "_")


def _numeric(frame: pd.DataFrame, key: str, constraint: str) -> tuple[dict, np.ndarray]:
    v = frame[key].to_numpy(dtype=float)
    item = {"key": _key(key), "type": "numeric", "min": float(v.min()), "max": float(v.max())}
    return {**item, "constraint": constraint}, v


def _coded(
    frame: pd.DataFrame, key: str, typ: str, options: tuple[str, ...] | None, constraint: str
) -> tuple[dict, np.ndarray]:
    """An item coded 1..k in the order of `options` (sorted levels when None)."""
    values = frame[key].astype(str)
    opts = tuple(options) if options is not None else tuple(sorted(values.unique()))
    unknown = sorted(set(values) - set(opts))
    if unknown:
        raise DatasetError(f"{key}: unexpected value(s) {', '.join(map(repr, unknown))}")
    codes = values.map({o: i + 1 for i, o in enumerate(opts)}).to_numpy(dtype=float)
    return {"key": _key(key), "type": typ, "options": list(opts), "constraint": constraint}, codes


def german_gao2023() -> Dataset:
    """German credit (sex) with the paper's 8 mutable and 12 immutable attributes."""
    f = _read(
        "german",
        [
            *GERMAN_NUMERIC_MUTABLE,
            "employment-since",
            "job",
            *GERMAN_CATEGORICAL_FIXED,
            *GERMAN_BINARY_FIXED,
            "age",
            "sex",
            "class-label",
        ],
    )
    parts = [_numeric(f, k, "any") for k in GERMAN_NUMERIC_MUTABLE]
    parts.append(_coded(f, "employment-since", "ordinal", EMPLOYMENT, "any"))
    parts.append(_coded(f, "job", "ordinal", JOB, "any"))
    parts.append(_numeric(f, "age", "fixed"))
    parts += [_coded(f, k, "categorical", None, "fixed") for k in GERMAN_CATEGORICAL_FIXED]
    parts += [_coded(f, k, "binary", None, "fixed") for k in GERMAN_BINARY_FIXED]
    male = (f["sex"].astype(str) == "male").to_numpy().astype(int)
    sex = {"key": "sex", "type": "binary", "options": ["female", "male"], "constraint": "fixed"}
    parts.append((sex, male + 1.0))
    schema = load_schema({"name": "german_gao2023", "profile_items": [p[0] for p in parts]})
    codes = np.column_stack([p[1] for p in parts])
    y = f["class-label"].to_numpy().astype(int)
    return Dataset("german_gao2023", schema, codes, y, male, "sex", ("female", "male"))


def gmc_prepared() -> pd.DataFrame:
    """GMC rows as CARLA's catalog keeps them: complete, no |z| >= 3, label 1 = repays."""
    f = _read("gmc", [*GMC_NUMERIC, "SeriousDlqin2yrs"]).dropna(axis=0)
    x = f[list(GMC_NUMERIC)].to_numpy(dtype=float)
    z = (x - x.mean(axis=0)) / x.std(axis=0)  # scipy.stats.zscore, ddof = 0
    f = f[(np.abs(z) < 3.0).all(axis=1)]
    return f.assign(SeriousDlqin2yrs=1 - f["SeriousDlqin2yrs"].to_numpy(dtype=int))


def gmc_gao2023() -> Dataset:
    """GMC (age above the median) prepared as CARLA and the authors prepare it."""
    f = gmc_prepared().reset_index(drop=True)
    age = f["age"].to_numpy(dtype=float)
    older = (age > np.quantile(age, 0.5)).astype(int)
    mutable = [k for k in GMC_NUMERIC if k != "age"]
    parts = [_numeric(f, k, "any") for k in mutable]
    group = {"key": "age_group", "type": "binary", "options": ["younger", "older"]}
    parts.append(({**group, "constraint": "fixed"}, older + 1.0))
    schema = load_schema({"name": "gmc_gao2023", "profile_items": [p[0] for p in parts]})
    codes = np.column_stack([p[1] for p in parts])
    y = f["SeriousDlqin2yrs"].to_numpy().astype(int)
    return Dataset("gmc_gao2023", schema, codes, y, older, "age_group", ("younger", "older"))


PAPER_LOADERS: dict[str, Callable[[], Dataset]] = {
    "german_gao2023": german_gao2023,
    "gmc_gao2023": gmc_gao2023,
}
