"""The tables the analysis reads, declared once (`analysis.table_schemas`): an export's files
checked by the rules the contract states, a distance held to one rule in an export and in
every plain CSV a command reads, and each column of the contract described as its own."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from analysis import contract as c
from analysis import table_schemas as ts
from analysis.__main__ import main as analysis_main
from analysis.export import ExportError, load_export
from recourse_engine import load_schema

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "data" / "demo_export"
FILES = (c.EVALUATIONS, c.PARTICIPANTS, c.PAGE_VISITS)


def _demo(file: str) -> pd.DataFrame:
    return pd.read_csv(DEMO / f"{file}.csv", dtype=dict.fromkeys(c.IDENTIFIERS, str))


@pytest.mark.parametrize("file", FILES)
def test_the_writers_files_pass_their_schemas(file: str) -> None:
    """The demo export (written by the platform) holds to what the contract states."""
    schema = load_schema(DEMO / c.SCHEMA)
    assert ts.check_table(_demo(file), ts.export_table(file, schema), file) is None
    assert ts.check_table(_demo(file), ts.export_table(file), file) is None


@pytest.mark.parametrize(
    ("file", "column", "bad", "reason"),
    [
        (c.EVALUATIONS, "position", 0, "0 is below 1"),  # 1..k
        (c.EVALUATIONS, "acceptance", 8, "8 is not in 1..7"),  # the rating scale
        (c.EVALUATIONS, "any_impossible", 2, "2 is not one of 0, 1"),  # 0=no; 1=yes
        (c.EVALUATIONS, "origin", "borrowed", "'borrowed' is not one of pool, generated"),
        (c.EVALUATIONS, "proximity_rank", 0, "0 is below 1"),
        (c.EVALUATIONS, "seconds_on_page", "slow", "'slow' is not a number"),
        (c.EVALUATIONS, "submitted_at", "today", "'today' is not an ISO 8601 time"),
        (c.EVALUATIONS, "sparsity", 1.5, "1.5 is not a whole number"),
        (c.EVALUATIONS, "x_education", 6, "6 is not an option code 1..5"),
        (c.PARTICIPANTS, "outcome", "won", "'won' is not one of completed"),
        (c.PARTICIPANTS, "age", 40.5, "40.5 is not a whole number"),
        (c.PARTICIPANTS, "flagged", 3, "3 is not one of 0, 1"),
        (c.PARTICIPANTS, "income", float("inf"), "inf is not a finite number"),
        (c.PARTICIPANTS, "participant", "1", "'1' repeats an earlier row"),
        (c.PAGE_VISITS, "views", 0, "0 is below 1"),
        (c.PAGE_VISITS, "seconds", -2.0, "-2 is below 0"),
        (c.PAGE_VISITS, "exited_at", "never", "'never' is not an ISO 8601 time"),
    ],
)
def test_the_contracts_rules_refuse_a_bad_cell(file, column, bad, reason) -> None:
    frame = _demo(file)
    frame[column] = frame[column].astype(object)
    frame.loc[1, column] = bad
    schema = ts.export_table(file, load_schema(DEMO / c.SCHEMA))
    problem = ts.check_table(frame, schema, f"{file}.csv")
    assert problem is not None and problem.startswith(f"{file}.csv: row 2, column {column!r}: ")
    assert reason in problem


# --- one rule for a distance, in every reader -----------------------------------------------


@pytest.fixture
def ratings(tmp_path: Path) -> Path:
    """A plain CSV of ratings whose third row has a negative proximity."""
    rows = [f"{p},{s},{s / 4:.2f},{1 + (p + s) % 7},{p}:x,a,c{s}\n"
            for p in range(8) for s in range(1, 6)]  # fmt: skip
    rows[2] = rows[2].replace(",0.75,", ",-0.75,")
    path = tmp_path / "ratings.csv"
    path.write_text("participant,sparsity,proximity,action,unit,coder,codes\n" + "".join(rows))
    return path


READERS = {
    "gamm": ["gamm", "--input", "{csv}", "--outcome", "action", "--distance", "sparsity"],
    "gamm --formula": ["gamm", "--input", "{csv}", "--formula", "action ~ s(sparsity)"],
    "segregation": ["segregation", "--input", "{csv}", "--group", "coder", "--features",
                    "sparsity,proximity"],
    "coding agreement": ["coding", "agreement", "--codings", "{csv}"],
}  # fmt: skip


@pytest.mark.parametrize("args", READERS.values(), ids=READERS)
def test_a_negative_distance_is_refused_in_every_plain_csv(
    ratings: Path, tmp_path: Path, capsys: pytest.CaptureFixture, args: list[str]
) -> None:
    out = tmp_path / "out"
    argv = [a.format(csv=ratings) for a in args] + ["--out", str(out), "--no-progress"]
    assert analysis_main(argv) == 2
    err = capsys.readouterr().err
    assert err == f"error: {ratings}: row 3, column 'proximity': -0.75 is below 0\n"
    assert not out.exists()


def test_the_gamms_distance_is_held_to_the_rule_whatever_its_name(
    ratings: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    gower = ratings.read_text().replace("proximity", "gower")
    argv = ["gamm", "--input", str(ratings), "--outcome", "action", "--distance", "gower",
            "--out", str(tmp_path / "out")]  # fmt: skip
    for bad, reason in (("-0.75", "-0.75 is below 0"), ("-inf", "-inf is not a finite number")):
        ratings.write_text(gower.replace(",-0.75,", f",{bad},"))
        assert analysis_main(argv) == 2
        assert capsys.readouterr().err == f"error: {ratings}: row 3, column 'gower': {reason}\n"
    assert not (tmp_path / "out").exists()


def test_a_negative_distance_is_refused_in_an_export(tmp_path: Path) -> None:
    export = tmp_path / "export"
    shutil.copytree(DEMO, export)
    ev = pd.read_csv(export / "evaluations.csv", dtype=str, keep_default_na=False)
    ev.loc[2, "proximity"] = "-0.75"
    ev.to_csv(export / "evaluations.csv", index=False)
    with pytest.raises(ExportError) as err:
        load_export(export)
    assert str(err.value) == (
        f"{export}: evaluations.csv: row 3, column 'proximity': -0.75 is below 0"
    )


# --- the codebook's words -------------------------------------------------------------------


def test_every_column_has_its_own_description() -> None:
    """Two columns that mean different things never share a description; one name means
    one thing in every file unless the contract gives a file its own column."""
    meaning: dict[str, c.Column] = {}
    for file in FILES:
        for name in c.COLUMNS:
            col = c.column(file, name)
            assert col.name == name
            first = meaning.setdefault(col.describe(), col)
            assert first is col, (file, name, first.name)
    evaluation = c.column(f"{c.EVALUATIONS}.csv", "submitted_at").describe()
    participant = c.column(f"{c.PARTICIPANTS}.csv", "submitted_at").describe()
    assert evaluation == "time the evaluation was stored"
    assert participant.startswith("delayed release: profile submitted")
