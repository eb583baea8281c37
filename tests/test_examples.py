"""The notebooks under examples/ (jupytext percent scripts) run from top to bottom as
notebooks: each is converted with jupytext and executed cell by cell in a Jupyter kernel by
nbclient, on the small data shipped beside them; a cell that raises fails the test."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))

pytestmark = pytest.mark.slow


def test_there_are_the_three_notebooks():
    assert [p.name for p in EXAMPLES] == [
        "analyse_study_export.py",
        "compare_methods.py",
        "segregation_effects.py",
    ]


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_notebook_executes(path, monkeypatch):
    jupytext = pytest.importorskip("jupytext")
    from nbclient import NotebookClient

    notebook = jupytext.read(path)
    assert sum(c.cell_type == "code" for c in notebook.cells) >= 3
    monkeypatch.setenv("MPLBACKEND", "Agg")
    client = NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    outputs = [o for c in notebook.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    # the result objects show as tables or figures, not only as text
    kinds = {k for o in outputs for k in o.get("data", {})}
    assert kinds & {"text/html", "image/png"}, kinds
