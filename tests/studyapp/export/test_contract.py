"""The export contract (`analysis.contract`) against what the platform really writes: the
rows the writer builds carry exactly the contract's columns, the codebook describes each in
the contract's words, Parquet is typed as the codebook says, every participant state has the
outcome the contract gives it, and the analysis reader takes the writer's files as they are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from analysis import contract, contract_sources
from analysis.export import ExportError, load_export
from studyapp import models
from studyapp.definition import outcomes, screening
from studyapp.export import export_study, tables
from studyapp.export.codebook import study_facts
from studyapp.export.tables import Tables
from studyapp.models import Participant
from tests.studyapp.conftest import SCHEMA
from tests.studyapp.console.factory import populate

from .design_columns import DESIGN_TAIL

S = Participant.State


@pytest.fixture
def every_state(study: Any) -> Any:
    """Six completed participants with five evaluations each, and one in every state."""
    populate(study, 6, seed=3)
    for state in S.values:
        Participant.objects.create(study=study, state=state, screening={"gender": "2"})
    return study


def _write(study: Any, out: Path, *, full: bool) -> Path:
    export_study(study=study, out=out, parquet=True, with_text=full, with_panel_ids=full)
    return out


@pytest.mark.parametrize("full", [False, True])
def test_rows_carry_exactly_the_contracts_columns(every_state: Any, full: bool) -> None:
    tables = Tables.of(every_state, with_text=full, with_panel_ids=full)
    questions = [q["key"] for q in screening.questions(every_state.schema)]
    ev_cols = contract.evaluation_columns(SCHEMA.keys, with_text=full)
    pa_cols = contract.participant_columns(SCHEMA.keys, questions, with_panel_ids=full)
    # a row key the contract lacks would be dropped by the frame, a missing one left empty;
    # free text and panel ids are not even in the rows unless asked for
    assert [list(row) for row in tables.evaluation_rows()] == [ev_cols] * 30
    assert {tuple(row) for row in tables.participant_rows()} == {tuple(pa_cols)}


@pytest.mark.parametrize("full", [False, True])
def test_written_files_and_codebook_follow_the_contract(
    every_state: Any, tmp_path: Path, full: bool
) -> None:
    d = _write(every_state, tmp_path, full=full)
    assert sorted(p.name for p in d.iterdir()) == sorted(
        [contract.CODEBOOK, contract.SCHEMA]
        + [
            f"{t}.{ext}"
            for t in (contract.EVALUATIONS, contract.PARTICIPANTS, contract.PAGE_VISITS,
                      "participants_wide")  # fmt: skip
            for ext in ("csv", "parquet")
        ]
    )
    cb = pd.read_csv(d / contract.CODEBOOK, keep_default_na=False)
    assert list(cb.columns) == list(contract.CODEBOOK_COLUMNS)
    facts = study_facts(Tables.of(every_state))
    for table in (contract.EVALUATIONS, contract.PARTICIPANTS):
        columns = list(pd.read_csv(d / f"{table}.csv", nrows=0).columns)
        rows = cb[cb["file"] == f"{table}.csv"]
        assert list(rows["column"]) == columns  # every column once, in file order
        arrow = pq.read_schema(d / f"{table}.parquet")
        for row in rows.itertuples():
            assert row.type in contract.TYPES and row.description
            assert "{" not in row.allowed + row.description  # every template filled
            if row.column in contract.COLUMNS:
                assert tuple(row[3:]) == contract.column(row.file, row.column).entry(facts)
            else:
                assert row.column.startswith((*contract.ITEM_PREFIXES, contract.SCREENING_PREFIX))
            want = {"integer": pa.int64(), "float": pa.float64()}.get(row.type, pa.string())
            assert arrow.field(row.column).type == want, row.column


def test_every_column_has_its_own_description(every_state: Any, tmp_path: Path) -> None:
    """A name in two files with two meanings gets each file's description (participants'
    `submitted_at` is the profile's submission, evaluations' the rating's)."""
    cb = pd.read_csv(
        _write(every_state, tmp_path, full=True) / contract.CODEBOOK, keep_default_na=False
    )
    described = cb.set_index(["file", "column"])["description"]
    assert described["evaluations.csv", "submitted_at"] == "time the evaluation was stored"
    assert described["participants.csv", "submitted_at"].startswith("delayed release: profile")
    for (file, column), text in described.items():
        if column in contract.COLUMNS and file != "participants_wide.csv":  # copies: test_wide
            assert text == contract.column(file, column).describe(study_facts(
                Tables.of(every_state))), (file, column)  # fmt: skip
    # columns that share a description are one column, in the files that both have it
    shared = cb.groupby("description")["column"].nunique()
    assert shared[shared > 1].to_dict() == {}


def test_a_column_declared_twice_is_refused() -> None:
    twice = [contract.COLUMNS["submitted_at"], contract.OWN["participants"]["submitted_at"]]
    with pytest.raises(ValueError, match="'submitted_at' is declared twice"):
        contract._by_name(twice)


def test_codebook_fills_the_studys_facts(every_state: Any, tmp_path: Path) -> None:
    cb = pd.read_csv(
        _write(every_state, tmp_path, full=True) / contract.CODEBOOK, keep_default_na=False
    )
    by_column = cb.drop_duplicates("column").set_index("column")
    assert by_column.loc["study", "allowed"] == every_state.slug
    assert every_state.design in by_column.loc["strategy", "description"]
    assert by_column.loc["changed", "allowed"] == "; ".join(SCHEMA.keys)
    assert by_column.loc["changed", "description"].endswith(", ';'-joined")
    assert by_column.loc["state", "allowed"] == "; ".join(S.values)
    assert by_column.loc["outcome", "allowed"].split("; ") == list(contract.OUTCOMES)


def test_every_state_has_the_contracts_outcome(every_state: Any, tmp_path: Path) -> None:
    d = _write(every_state, tmp_path, full=False)
    pa_ = pd.read_csv(d / "participants.csv", keep_default_na=False)
    assert set(pa_["state"]) == set(S.values)
    assert list(pa_["outcome"]) == [contract.outcome(s) for s in pa_["state"]]
    by_state = dict(zip(pa_["state"], pa_["outcome"], strict=True))
    assert by_state[S.NO_RECOURSE] == "no_recourse" and by_state[S.WITHDRAWN] == "withdrew"
    assert by_state[S.EVALUATING] == contract.UNFINISHED == "incomplete"


def test_outcome_map_covers_the_models_states_and_codes() -> None:
    states = set(S.values)
    assert set(contract.STATE_OUTCOME) <= states
    # a new state must be placed: an end state gets an outcome, anything else is unfinished
    assert states - set(contract.STATE_OUTCOME) == {
        "screening", "consent", "questions_pre", "scenario", "profile", "decision", "waiting",
        "evaluating", "questions_post", "wave_follow", "wave_away", "wave_changes",
    }  # fmt: skip
    # the completion codes: one per outcome a study configures, no_recourse credited
    assert set(contract.CODE_OUTCOME.values()) == set(models.OUTCOMES)
    assert outcomes.STATE_OUTCOME is contract.CODE_OUTCOME
    assert outcomes.STATE_OUTCOME[S.NO_RECOURSE] == "completed"
    assert {s: o for s, o in contract.CODE_OUTCOME.items() if s != S.NO_RECOURSE} == {
        s: o for s, o in contract.STATE_OUTCOME.items() if s != S.NO_RECOURSE
    }


def test_analysis_reader_takes_the_writers_parquet(every_state: Any, tmp_path: Path) -> None:
    d = _write(every_state, tmp_path, full=True)
    from_csv = load_export(d)
    for table in (contract.EVALUATIONS, contract.PARTICIPANTS):
        (d / f"{table}.csv").unlink()
    from_parquet = load_export(d)
    assert from_parquet.items == from_csv.items == SCHEMA.keys
    n = 6 + len(S.values)  # the completes and one in every state
    assert len(from_parquet.evaluations) == 30 and len(from_parquet.participants) == n
    for col in (*contract.REQUIRED[contract.EVALUATIONS], "x_education", "cf_education"):
        left, right = from_csv.evaluations[col], from_parquet.evaluations[col]
        assert left.tolist() == right.tolist(), col


def test_analysis_reader_refuses_the_writers_file_without_a_required_column(
    every_state: Any, tmp_path: Path
) -> None:
    d = _write(every_state, tmp_path, full=False)
    for table in (contract.EVALUATIONS, contract.PARTICIPANTS):
        (d / f"{table}.parquet").unlink()
    ev = pd.read_csv(d / "evaluations.csv")
    for col in contract.REQUIRED[contract.EVALUATIONS]:
        ev.drop(columns=[col]).to_csv(d / "evaluations.csv", index=False)
        with pytest.raises(ExportError, match=f"missing column\\(s\\) {col}$"):
            load_export(d)


def test_recourse_columns_say_where_a_recourse_comes_from_and_how_it_ranks(
    every_state: Any, tmp_path: Path
) -> None:
    from recourse_engine.distances import RANK_DECIMALS

    cb = pd.read_csv(_write(every_state, tmp_path, full=False) / contract.CODEBOOK, dtype=str)
    ev = cb[cb["file"] == "evaluations.csv"].set_index("column")
    assert list(ev.index[-len(DESIGN_TAIL) :]) == DESIGN_TAIL
    assert ev.loc["origin", "allowed"] == "pool; generated"
    assert ev.loc["method_params", "allowed"] == "JSON object"
    assert "what is shown instead" in ev.loc["fallback", "description"]
    assert ev.loc[["sparsity_rank", "proximity_rank"], "type"].tolist() == ["integer"] * 2
    # the codebook says which recourse is both the sparsest and the most proximate
    both = "both ranks 1 is the sparsest and the most proximate"
    assert both in ev.loc["strategy", "description"]
    assert "sparsity_rank 1 and proximity_rank 1" in ev.loc["proximity_rank", "description"]
    # the rounding the codebook states is the engine's
    assert contract.RANK_DECIMALS == RANK_DECIMALS
    assert f"at {RANK_DECIMALS} decimals" in ev.loc["proximity_rank", "description"]


def test_ranks_stay_integers_and_old_recourses_leave_them_empty(
    every_state: Any, tmp_path: Path
) -> None:
    # the factory stores recourses as they were before ranks were recorded; rank one now
    ranked = models.Recourse.objects.filter(participant__study=every_state).first()
    models.Recourse.objects.filter(pk=ranked.pk).update(sparsity_rank=2, proximity_rank=17)
    d = _write(every_state, tmp_path, full=False)
    csv = pd.read_csv(d / "evaluations.csv", dtype=str, keep_default_na=False)
    row = csv[csv["recourse"] == str(ranked.pk)].iloc[0]
    assert (row["sparsity_rank"], row["proximity_rank"]) == ("2", "17")  # not 2.0
    others = csv[csv["recourse"] != str(ranked.pk)]
    assert set(others["sparsity_rank"]) == set(others["proximity_rank"]) == {""}
    assert set(csv["origin"]) == {"pool"} and set(csv["method"]) == {"pool_search"}
    parquet = pq.read_table(d / "evaluations.parquet")
    assert parquet.schema.field("proximity_rank").type == pa.int64()
    ranks = parquet.column("proximity_rank").to_pylist()
    assert sorted(r for r in ranks if r is not None) == [17] and ranks.count(None) == 29


def test_every_fixed_column_names_the_fields_it_is_written_from() -> None:
    """The contract maps each file's fixed columns to model fields; the writer's queries ask
    for exactly those, so a column added to a file without its fields fails here."""
    fixed = {
        contract.EVALUATIONS: {*contract.EVALUATION_COLUMNS, *contract.RECOURSE_COLUMNS},
        contract.PARTICIPANTS: set(contract.PARTICIPANT_COLUMNS),
        contract.PAGE_VISITS: set(contract.PAGE_VISIT_COLUMNS),
    }
    for file, columns in fixed.items():
        assert set(contract_sources.SOURCES[file]) == columns - {"study"}, file
    queried = {
        contract.EVALUATIONS: tables.evaluation_values,
        contract.PARTICIPANTS: tables.participant_values,
        contract.PAGE_VISITS: tables.page_visit_values,
    }
    for file, values in queried.items():
        fields = list(values(models.Study(pk=1)).query.values_select)
        fields += list(values(models.Study(pk=1)).query.annotation_select)
        assert sorted(fields) == sorted(contract_sources.source_fields(file)), file
