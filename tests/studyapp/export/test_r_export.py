"""`export_study --with-r`: the study's export carries the R hand-off — labelled R data whose
coded columns are factors with the codebook's labels, and analysis.R."""

from __future__ import annotations

from io import StringIO
from pathlib import Path
from typing import Any

import pandas as pd
import pyreadr
from django.core.management import call_command

from tests.studyapp.console.factory import populate


def test_with_r_writes_labelled_r_data_beside_the_tables(study: Any, tmp_path: Path) -> None:
    populate(study, 4, seed=5)
    out = tmp_path / "export"
    call_command("export_study", study.slug, "--out", str(out), "--with-r", stdout=StringIO())
    names = {p.name for p in out.iterdir()}
    assert {"evaluations.csv", "evaluations.rds", "evaluations.sav", "analysis.R"} <= names
    ev_csv = pd.read_csv(out / "evaluations.csv")
    ev_r = pyreadr.read_r(str(out / "evaluations.rds"))[None]
    assert len(ev_r) == len(ev_csv) == 20
    # a coded item is a factor whose levels are the codebook's labels, in code order
    item = next(c for c in ev_r.columns if c.startswith("cf_"))
    assert isinstance(ev_r[item].dtype, pd.CategoricalDtype)
    assert "analysis.R" in names and "mgcv" in (out / "analysis.R").read_text()


def test_without_the_flag_the_export_is_the_tables_only(study: Any, tmp_path: Path) -> None:
    populate(study, 2, seed=6)
    out = tmp_path / "export"
    call_command("export_study", study.slug, "--out", str(out), stdout=StringIO())
    assert not any(p.suffix in (".rds", ".sav", ".R") for p in out.iterdir())
