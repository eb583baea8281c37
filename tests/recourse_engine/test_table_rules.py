"""Declared table schemas (`recourse_engine.table_rules`): the first problem as one line
naming row, column, value and reason; pandera imported only where a table is checked."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recourse_engine import table_rules as rules

ROOT = Path(__file__).resolve().parents[2]


def _ratings() -> object:
    return rules.table(
        {
            "participant": rules.column([rules.unique()], empty=False),
            "proximity": rules.column(rules.distance()),
            "acceptance": rules.column([rules.number(), rules.whole(), rules.between(1, 7)]),
            "submitted_at": rules.column([rules.time()], required=False),
            "flag": rules.column([rules.one_of([0, 1])], required=False),
            "origin": rules.column([rules.one_of(["pool", "generated"])], required=False),
        },
        [rules.rule(lambda f: ~f.duplicated(["participant", "acceptance"]), "repeat a row")],
    )


def _frame(**edits: list) -> pd.DataFrame:
    base = {
        "participant": ["p1", "p2", "p3", "p4"],
        "proximity": [0.5, 1.25, 0.0, 3.0],
        "acceptance": [1, 4, 7, 2],
    }
    return pd.DataFrame({**base, **edits})


@pytest.mark.parametrize(
    ("edits", "message"),
    [
        ({}, None),
        ({"proximity": [0.5, -1.5, 0.0, -2.0]}, "row 2, column 'proximity': -1.5 is below 0 (2 rows: 2, 4)"),
        ({"proximity": [0.5, np.inf, 0.0, 1.0]}, "row 2, column 'proximity': inf is not a finite number"),
        ({"proximity": ["0.5", "far", "0", "1"]}, "row 2, column 'proximity': 'far' is not a number"),
        ({"acceptance": [1, 4, 8, 2]}, "row 3, column 'acceptance': 8 is not in 1..7"),
        ({"acceptance": [1, 4.5, 7, 2]}, "row 2, column 'acceptance': 4.5 is not a whole number"),
        ({"participant": ["p1", None, "p3", "p4"]}, "row 2, column 'participant': empty"),
        ({"participant": ["p1", "p1 ", "p3", "p1"]}, "row 2, column 'participant': 'p1 ' repeats an earlier row (2 rows: 2, 4)"),
        ({"submitted_at": ["2026-01-01T00:00:00+00:00", None, "soon", "2026-01-01"]}, "row 3, column 'submitted_at': 'soon' is not an ISO 8601 time"),
        ({"flag": [0, 1, 2, 1]}, "row 3, column 'flag': 2 is not one of 0, 1"),
        ({"origin": ["pool", "elsewhere", None, "generated"]}, "row 2, column 'origin': 'elsewhere' is not one of pool, generated"),
        ({"participant": ["p1", "p1", "p3", "p4"], "acceptance": [3, 3, 7, 2]}, "row 2, column 'participant': 'p1' repeats an earlier row"),
    ],
)  # fmt: skip
def test_the_first_problem_names_row_column_value_and_reason(edits, message):
    assert rules.first_problem(_frame(**edits), _ratings()) == message


def test_missing_columns_come_first_and_rules_on_whole_rows_last() -> None:
    frame = _frame(proximity=[-1.0, 0, 0, 0]).drop(columns=["acceptance"])
    assert rules.first_problem(frame, _ratings()) == "missing column(s) acceptance"
    rows = rules.table({}, [rules.rule(lambda f: ~f.duplicated(["a", "b"]), "a and b repeat")])
    frame = pd.DataFrame({"a": [1, 2, 1, 1], "b": [5, 5, 5, 5]})
    assert rules.first_problem(frame, rows) == "row 3: a and b repeat (2 rows: 3, 4)"


def test_rows_are_counted_from_the_first_data_row_whatever_the_index() -> None:
    frame = _frame(acceptance=[1, 9, 7, 2]).set_axis(["a", "b", "c", "d"])
    assert rules.first_problem(frame, _ratings()).startswith("row 2, column 'acceptance': 9")


def test_a_long_list_of_rows_is_cut() -> None:
    frame = pd.DataFrame({"proximity": -np.arange(1.0, 10.0)})
    schema = rules.table({"proximity": rules.column(rules.distance())})
    assert rules.first_problem(frame, schema) == (
        "row 1, column 'proximity': -1 is below 0 (9 rows: 1, 2, 3, 4, 5, ...)"
    )


def test_pandera_is_imported_only_when_a_table_is_checked() -> None:
    """pandera takes about a third of a second to import: the engine, the analysis reader
    and the commands' shared module load without it."""
    code = (
        "import sys, recourse_engine, analysis.export, analysis.cli.common\n"
        "before = 'pandera' in sys.modules\n"
        "from recourse_engine import carloan_schema, pool_from_frame, synth_pool\n"
        "pool_from_frame(synth_pool(carloan_schema(), n=20, seed=0), carloan_schema())\n"
        "print(before, 'pandera' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.split() == ["False", "True"]


def test_a_rule_that_cannot_run_is_a_bug_not_a_pass() -> None:
    broken = rules.table({"a": rules.column([rules.rule(lambda s: s.no_such_method(), "bad")])})
    with pytest.raises(RuntimeError, match="rule 'bad' of column 'a' failed"):
        rules.first_problem(pd.DataFrame({"a": [1, 2]}), broken)


def test_the_participant_pages_load_without_pandera(tmp_path: Path) -> None:
    code = (
        "import sys, django\n"
        "django.setup()\n"
        "import studyapp.config.urls, studyapp.participation.views\n"
        "print('pandera' in sys.modules)"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "PYTHONPATH")}
    env |= {"DJANGO_SETTINGS_MODULE": "studyapp.config.settings", "STUDYAPP_VAR_DIR": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT, env=env
    )
    assert out.stdout.split() == ["False"]


def test_row_problems_name_every_bad_cell_of_every_row_in_column_order() -> None:
    frame = _frame(
        participant=["p1", "p1", "p3", "p4"],
        proximity=[0.5, -1.0, "far", 3.0],
        acceptance=[9, 4, 7, 2.5],
    ).set_index(pd.Index([10, 11, 12, 13]))  # any index: rows are positions
    got = rules.row_problems(frame, _ratings())
    assert got == [
        ["column 'acceptance': 9 is not in 1..7"],
        ["column 'participant': 'p1' repeats an earlier row", "column 'proximity': -1 is below 0"],
        ["column 'proximity': 'far' is not a number"],
        ["column 'acceptance': 2.5 is not a whole number"],
    ]
    # a reason the caller words itself is left out; a good frame has no problem at all
    assert rules.row_problems(frame, _ratings(), skip=(rules.DUPLICATE,))[1] == [
        "column 'proximity': -1 is below 0"
    ]
    assert rules.row_problems(_frame(), _ratings()) == [[], [], [], []]
    # the first problem is the first of these in column order
    assert rules.first_problem(frame, _ratings()).startswith("row 2, column 'participant'")
