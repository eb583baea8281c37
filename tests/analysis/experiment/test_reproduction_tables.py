"""Each reproduction table of docs/methods.md is what `report.rewrite` makes of its
committed run files (docs/evidence/reproduction/NAME): a number edited in the docs, or a
run file changed, fails here."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from analysis.experiment.report import rewrite

ROOT = Path(__file__).resolve().parents[3]
EVIDENCE = ROOT / "docs" / "evidence" / "reproduction"
DATASETS = ("law_sex", "law_race", "gmc", "compas_sex", "compas_race", "german")


@pytest.mark.parametrize("dataset", DATASETS)
def test_the_docs_table_is_rewritten_from_its_run_files(dataset: str, tmp_path: Path) -> None:
    folder = tmp_path / dataset
    shutil.copytree(EVIDENCE / dataset, folder)
    rewrite(dataset, folder)
    table = (folder / "report.md").read_text().replace(f"### {dataset}:", f"##### {dataset}:", 1)
    assert table.rstrip() in (ROOT / "docs" / "methods.md").read_text()
