import pandas as pd
import pytest

from recourse_engine import PoolError, carloan_schema, pool_from_frame, read_pool_csv, synth_pool


@pytest.fixture
def pool_csv(tmp_path):
    frame = synth_pool(n=30, seed=1)
    path = tmp_path / "pool.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_reads_valid_pool_and_keeps_extra_columns(pool_csv):
    path, frame = pool_csv
    pool = read_pool_csv(path, carloan_schema())
    assert len(pool) == 30
    assert list(pool.extra.columns) == ["gender", "age"]
    assert (pool.codes[:, 4] == frame["position"]).all()
    back = pool.to_frame(carloan_schema())
    pd.testing.assert_frame_equal(back[frame.columns], frame, check_dtype=False)


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda f: f.drop(columns=["toeic"]), "missing column(s) toeic"),
        (
            lambda f: f.assign(position=f["position"].where(f.index != 6, 11)),
            "row 7, column 'position': 11 is not an option code 1..10",
        ),
        (
            lambda f: f.assign(education=f["education"].where(f.index != 0, 0)),
            "row 1, column 'education'",
        ),
        (
            lambda f: f.assign(income=f["income"].astype(object).where(f.index != 2, "lots")),
            "row 3, column 'income': 'lots' is not a number",
        ),
        (
            lambda f: f.assign(income=f["income"].where(f.index != 4, -5)),
            "row 5, column 'income': -5 is below 0",
        ),
        (
            lambda f: f.assign(id=["same"] * len(f)),
            "row 2, column 'id': 'same' repeats an earlier row (29 rows: 2, 3, 4, 5, 6, ...)",
        ),
        (
            lambda f: f.assign(toeic=f["toeic"].astype(object).where(f.index % 10 != 3, "B2")),
            "row 4, column 'toeic': 'B2' is not an option code 1..8 (3 rows: 4, 14, 24)",
        ),
        (lambda f: f.iloc[0:0], "no rows"),
    ],
)
def test_bad_pools_name_file_row_and_column(tmp_path, pool_csv, mutate, needle):
    _, frame = pool_csv
    path = tmp_path / "bad.csv"
    mutate(frame.copy()).to_csv(path, index=False)
    with pytest.raises(PoolError) as err:
        read_pool_csv(path, carloan_schema())
    assert str(path) in str(err.value)
    assert needle in str(err.value)


def test_missing_and_empty_files(tmp_path):
    with pytest.raises(PoolError, match="file not found"):
        read_pool_csv(tmp_path / "nope.csv", carloan_schema())
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(PoolError, match="file is empty"):
        read_pool_csv(tmp_path / "empty.csv", carloan_schema())


@pytest.mark.parametrize(("blank", "shown"), [(None, "empty"), ("  ", "'  ' is not an id")])
def test_a_blank_id_is_refused_in_a_frame(pool_csv, blank, shown):
    _, frame = pool_csv
    frame = frame.astype({"id": object})
    frame.loc[3, "id"] = blank
    with pytest.raises(PoolError, match=f"^uploaded: row 4, column 'id': {shown}$"):
        pool_from_frame(frame, carloan_schema(), source="uploaded")
