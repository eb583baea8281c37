import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from analysis import contract
from analysis.export import ExportError, load_export
from recourse_engine import carloan_schema


def _write(tmp_path, **edits):
    ev = pd.DataFrame(
        {
            "study": "s",
            "participant": ["p1", "p1", "p2"],
            "recourse": ["r1", "r2", "r3"],
            "strategy": ["sparsest", "random", "proximate"],
            "sparsity": [1, 3, 2],
            "proximity": [0.2, 1.5, 0.7],
            "any_impossible": [0, 1, 0],
            "acceptance": [4, 7, 1],
            "action": [5, 2, 3],
            "x_education": [1, 2, 3],
            "cf_education": [2, 2, 4],
        }
    )
    pa = pd.DataFrame({"participant": ["p1", "p2"], "gender": ["Female", "Male"]})
    for frame, col, row, value in edits.values():
        target = ev if frame == "ev" else pa
        if col not in target:
            target[col] = target.iloc[:, 0]
        target[col] = target[col].astype(object)
        target.loc[row, col] = value
    ev.to_csv(tmp_path / "evaluations.csv", index=False)
    pa.to_csv(tmp_path / "participants.csv", index=False)
    (tmp_path / "schema.json").write_text(json.dumps(carloan_schema().to_dict()))
    return tmp_path


def test_loads_and_keeps_only_possible_evaluations(tmp_path):
    exp = load_export(_write(tmp_path))
    assert exp.items == ["education"]
    assert exp.schema is not None and exp.schema.d == 16
    kept = exp.kept_evaluations()
    assert list(kept["recourse"]) == ["r1", "r3"]
    assert kept["acceptance"].dtype.kind == "i"


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (("ev", "acceptance", 1, 8), "row 2, column 'acceptance': 8 is not in 1..7"),
        (("ev", "action", 0, 2.5), "row 1, column 'action': 2.5 is not a whole number"),
        (("ev", "sparsity", 2, "lots"), "row 3, column 'sparsity': 'lots' is not a number"),
        (("ev", "proximity", 2, -1.5), "row 3, column 'proximity': -1.5 is below 0"),
        (("ev", "proximity", 0, "inf"), "row 1, column 'proximity': inf is not a finite number"),
        (("ev", "participant", 1, None), "row 2, column 'participant': empty"),
        (("ev", "any_impossible", 0, 2), "row 1, column 'any_impossible': 2 is not one of 0, 1"),
        (("ev", "participant", 2, "p9"), "'p9' is not in participants.csv"),
        (("ev", "cf_education", 0, 6), "column 'cf_education': 6 is not an option code 1..5"),
        (("ev", "recourse", 1, "r1"), "row 2: participant and recourse repeat"),
    ],
)
def test_bad_values_name_file_row_and_column(tmp_path, edit, needle):
    with pytest.raises(ExportError) as err:
        load_export(_write(tmp_path, e=edit))
    assert "evaluations.csv" in str(err.value)
    assert needle in str(err.value)


def test_missing_column_and_missing_files(tmp_path):
    d = _write(tmp_path)
    pd.read_csv(d / "evaluations.csv").drop(columns=["action"]).to_csv(
        d / "evaluations.csv", index=False
    )
    with pytest.raises(ExportError, match="missing column\\(s\\) action"):
        load_export(d)
    with pytest.raises(ExportError, match="neither evaluations.csv nor evaluations.parquet"):
        load_export(_empty(tmp_path))


def _empty(tmp_path):
    e = tmp_path / "empty"
    e.mkdir()
    return e


def test_contract_needs_nothing_but_the_standard_library():
    """Reading an export's contract must not pull in the platform, nor even pandas."""
    code = (
        "import sys, analysis.contract; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'django', 'studyapp', 'rest_framework', 'recourse_engine', 'pandas', 'numpy'}))"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root
    )
    assert out.stdout.strip() == "[]"


def test_reader_requires_the_contracts_columns(tmp_path):
    d = _write(tmp_path)
    ev = pd.read_csv(d / "evaluations.csv")
    assert set(contract.REQUIRED[contract.EVALUATIONS]) <= set(ev.columns)
    for col in contract.REQUIRED[contract.EVALUATIONS]:
        ev.drop(columns=[col]).to_csv(d / "evaluations.csv", index=False)
        with pytest.raises(ExportError, match=f"evaluations.csv: missing column\\(s\\) {col}$"):
            load_export(d)
    ev.to_csv(d / "evaluations.csv", index=False)
    pd.read_csv(d / "participants.csv").drop(columns=["participant"]).to_csv(
        d / "participants.csv", index=False
    )
    with pytest.raises(ExportError, match="participants.csv: missing column\\(s\\) participant"):
        load_export(d)


@pytest.mark.parametrize(
    ("states", "outcomes"),
    [
        (["completed", "no_recourse", "withdrawn"], ["completed", "no_recourse", "withdrew"]),
        (["evaluating", "screening", "no_such_state"], ["incomplete"] * 3),
    ],
)
def test_outcome_of_each_state(states, outcomes):
    assert [contract.outcome(s) for s in states] == outcomes
    assert contract.CODE_OUTCOME["no_recourse"] == "completed"  # credited, not "no_recourse"
    assert set(contract.OUTCOMES) == {*contract.STATE_OUTCOME.values(), contract.UNFINISHED}
