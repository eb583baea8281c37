"""Pool preview: a good file passes with its distributions; every kind of bad file and every
bad row is reported (rows with their line number and column); a bad file changes nothing."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from recourse_engine import synth_pool
from studyapp.definition import engine_objects
from studyapp.definition.errors import StudyError
from studyapp.studies import pool
from tests.studyapp.conftest import SCHEMA, make_study
from tests.studyapp.console.conftest import pool_bytes


def _lines(data: bytes) -> list[str]:
    return data.decode().splitlines()


def _set(line: str, header: list[str], **cells: str) -> str:
    parts = line.split(",")
    for col, value in cells.items():
        parts[header.index(col)] = value
    return ",".join(parts)


def test_good_file_counts_and_distributions() -> None:
    frame = synth_pool(SCHEMA, n=300, seed=3)
    p = pool.pool_preview(SCHEMA.to_dict(), frame.to_csv(index=False).encode())
    assert p.ok and p.rows == 300 and p.errors == [] and p.rejected == []
    for it in SCHEMA.items:
        assert p.distributions[it.key] == {
            code: int((frame[it.key] == code).sum()) for code in range(1, it.n_options + 1)
        }
    stored = pd.read_csv(__import__("io").StringIO(p.csv_text), dtype={"id": str})
    assert (
        list(stored["id"]) == list(frame["id"])
        and len(engine_objects.pool_of(p.csv_text, SCHEMA)) == 300
    )
    assert p.to_dict()["distributions"]["education"]["1"] == int((frame["education"] == 1).sum())


def test_every_bad_row_listed_with_line_and_column() -> None:
    lines = _lines(pool_bytes(50))
    header = lines[0].split(",")
    lines[3] = _set(lines[3], header, education="9")  # file line 4
    lines[10] = _set(lines[10], header, income="lots", toeic="")  # file line 11
    lines[20] = _set(lines[20], header, id="")  # line 21
    lines[30] = lines[30] + ",surplus"  # line 31
    lines[40] = _set(lines[40], header, income="-5")  # line 41
    p = pool.pool_preview(SCHEMA, ("\n".join(lines) + "\n").encode())
    assert not p.ok and p.errors == [] and p.rows == 45 and p.csv_text == ""
    got = dict(p.rejected)
    assert sorted(got) == [4, 11, 21, 31, 41]
    assert "column 'education': '9' is not an option code 1..5" in got[4]
    assert "column 'income': 'lots' is not a number" in got[11]
    assert "column 'toeic': empty is not an option code" in got[11]
    assert "column 'id': empty is not an id" in got[21]
    assert "21 fields where the header has 20" in got[31]
    assert "column 'income': '-5' is below 0" in got[41]
    # distributions describe the accepted rows only
    assert sum(p.distributions["education"].values()) == 45


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "the file is empty"),
        (b"  \n\n", "the file is empty"),
        ("id,income\nP1,é".encode("latin-1"), "not UTF-8"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00", "not a CSV text file"),
        (b"id;income;education\nP1;1;2\n", "split by ';'"),
        (b"hello world\n", "missing column(s): id, income"),
        (None, "missing column(s): education"),
        (None, "unknown column(s): favourite_colour"),
        (None, "duplicate column(s): toeic"),
        (None, "no data rows"),
        (None, "duplicated id(s): 'P01' on lines 2 and 5"),
        (None, "too many rows (at most 10)"),
    ],
)
def test_bad_files(data: bytes | None, message: str) -> None:
    if data is None:
        frame = synth_pool(SCHEMA, n=20, seed=1)
        if "education" in message:
            frame = frame.drop(columns=["education"])
        elif "favourite" in message:
            frame["favourite_colour"] = "blue"
        elif "duplicate column" in message:
            frame.insert(3, "toeic", 1, allow_duplicates=True)
        elif "no data" in message:
            frame = frame.iloc[:0]
        elif "duplicated id" in message:
            assert frame.loc[0, "id"] == "P01"
            frame.loc[3, "id"] = "P01"
        data = frame.to_csv(index=False).encode()
    p = pool.pool_preview(SCHEMA, data, max_rows=10 if "too many" in message else 200_000)
    assert not p.ok and p.csv_text == ""
    assert any(message in e for e in p.errors), p.errors


def test_too_big_file_refused_before_parsing(monkeypatch: Any) -> None:
    monkeypatch.setattr(pool, "MAX_POOL_BYTES", 100)
    p = pool.pool_preview(SCHEMA, pool_bytes(5))
    assert not p.ok and "too big" in p.errors[0]


def test_reference_size_pool_previews() -> None:
    data = synth_pool(SCHEMA, n=3683, seed=0).to_csv(index=False).encode()
    p = pool.pool_preview(SCHEMA, data)
    assert p.ok and p.rows == 3683


def test_replace_pool_good_and_bad(transactional_db: Any) -> None:
    study = make_study(slug="draft", state="draft")
    before = (study.pool_csv, study.pool_hash, study.pool_rows)
    bad = _lines(pool_bytes(40))
    bad[5] = _set(bad[5], bad[0].split(","), position="0")
    p = pool.study_replace_pool(study=study, data=("\n".join(bad)).encode())
    assert not p.ok and [line for line, _ in p.rejected] == [6]
    study.refresh_from_db()
    assert (study.pool_csv, study.pool_hash, study.pool_rows) == before
    p = pool.study_replace_pool(study=study, data=pool_bytes(40))
    assert p.ok
    study.refresh_from_db()
    assert study.pool_rows == 40 and study.pool_hash == engine_objects.pool_csv_hash(study.pool_csv)
    assert study.pool_hash != before[1]


def test_replace_pool_of_live_study_refused(transactional_db: Any) -> None:
    study = make_study(slug="live1", state="live")
    before = study.pool_hash
    with pytest.raises(StudyError, match="frozen"):
        pool.study_replace_pool(study=study, data=pool_bytes(40))
    study.refresh_from_db()
    assert study.pool_hash == before
