import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from recourse_engine import carloan_schema
from recourse_engine.cli import main
from tests.run_cli import run_module

from .reference import slow_admissible, slow_proximity, slow_sparsity

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def files(tmp_path):
    pool, prof = tmp_path / "pool.csv", tmp_path / "prof.csv"
    assert main(["synth-pool", "--n", "400", "--seed", "0", "--out", str(tmp_path)]) == 0
    args = ["synth-pool", "--n", "8", "--seed", "9", "--out", str(tmp_path), "--name", "prof"]
    assert main(args) == 0
    return tmp_path, pool, prof


def _recourses(pool: Path, prof: Path, *more: str) -> int:
    """`recourses` on the pool and profiles, with the arguments that vary by test."""
    return main(["recourses", "--pool", str(pool), "--profiles", str(prof), *more])


def test_recourses_end_to_end_through_python_m(files):
    tmp, pool, prof = files
    folder = tmp / "result"
    out, cov = folder / "recourses.csv", folder / "coverage.csv"
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "recourse_engine",
            "recourses",
            "--pool",
            str(pool),
            "--profiles",
            str(prof),
            "--design",
            "sparsest:1,proximate:1,random:3",
            "--seed",
            "0",
            "--out",
            str(folder),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    r = pd.read_csv(out, dtype={"profile_id": str, "pool_id": str})
    s = carloan_schema()
    assert list(r.columns[:6]) == [
        "profile_id",
        "strategy",
        "pool_id",
        "sparsity",
        "proximity",
        "changed",
    ]
    assert set(s.keys) <= set(r.columns)
    p = pd.read_csv(pool, dtype={"id": str}).set_index("id")
    x = pd.read_csv(prof, dtype={"id": str}).set_index("id")
    c = pd.read_csv(cov, dtype={"profile_id": str}).set_index("profile_id")
    for _, row in r.iterrows():
        xi = x.loc[row["profile_id"], s.keys].tolist()
        ci = p.loc[row["pool_id"], s.keys].tolist()
        assert row[s.keys].tolist() == ci
        assert 3 * p.loc[row["pool_id"], "income"] >= 4 * x.loc[row["profile_id"], "income"]
        assert row["sparsity"] == slow_sparsity(s, xi, ci)
        assert row["proximity"] == pytest.approx(slow_proximity(s, xi, ci))
    # coverage: found = min(5, admissible) for every profile
    from recourse_engine import read_pool_csv

    pool_obj = read_pool_csv(pool, s)
    for pid, row in x.iterrows():
        n_adm = len(slow_admissible(s, pool_obj, row[s.keys].tolist(), row["income"]))
        assert c.loc[pid, "admissible"] == n_adm
        assert c.loc[pid, "found"] == (r["profile_id"] == pid).sum()


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (lambda f: f.drop(columns=["income"]), "missing column(s) income"),
        (lambda f: f.assign(toeic=99), "row 1, column 'toeic': 99 is not an option code 1..8"),
        (lambda f: f.assign(income="abc"), "row 1, column 'income': 'abc' is not a number"),
        (lambda f: f.assign(id="dup"), "row 2, column 'id': 'dup' repeats an earlier row"),
    ],
)
def test_bad_profiles_stop_with_a_message_and_write_nothing(files, capsys, edit, needle):
    tmp, pool, prof = files
    edit(pd.read_csv(prof)).to_csv(prof, index=False)
    out = tmp / "r"
    assert _recourses(pool, prof, "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert str(prof) in err and needle in err
    assert not out.exists()
    assert sorted(q.name for q in tmp.iterdir()) == ["pool.csv", "prof.csv"]


def test_bad_arguments(files, capsys):
    tmp, pool, prof = files
    assert _recourses(pool, prof, "--design", "best:1", "--out", str(tmp / "r")) == 2
    assert "unknown strategy 'best'" in capsys.readouterr().err
    assert _recourses(pool, prof, "--out", str(tmp / "no" / "r")) == 2
    assert f"folder {tmp / 'no'} does not exist" in capsys.readouterr().err
    # --out is a folder: a file name (the old convention) is refused, naming the convention
    assert _recourses(pool, prof, "--out", str(tmp / "r.csv")) == 2
    assert "--out takes a folder" in capsys.readouterr().err
    assert _recourses(pool, prof, "--out", str(pool)) == 2
    assert "exists and is not a folder" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["synth-pool", "--n", "-3", "--out", str(tmp / "p")])
    assert exc.value.code == 2
    assert "must be a non-negative integer" in capsys.readouterr().err
    assert (
        _recourses(pool, prof, "--schema", str(tmp / "missing.json"), "--out", str(tmp / "r")) == 2
    )
    assert "cannot read schema" in capsys.readouterr().err
    assert sorted(q.name for q in tmp.iterdir()) == ["pool.csv", "prof.csv"]


def test_train_model_and_use_it(files, capsys):
    tmp, pool, prof = files
    frame = pd.read_csv(pool)
    frame["ok"] = (frame["position"] >= 3).astype(int)
    frame.to_csv(pool, index=False)
    assert main(["train-model", "--pool", str(pool), "--label", "ok", "--out", str(tmp / "m")]) == 0
    model = tmp / "m" / "model.joblib"
    out = tmp / "r"
    more = ["--model", str(model), "--design", "sparsest:2", "--out", str(out), "--no-progress"]
    assert _recourses(pool, prof, *more) == 0
    r = pd.read_csv(out / "recourses.csv")
    from recourse_engine import load_model

    trained = load_model(model, carloan_schema())
    assert len(r) > 0
    assert trained.approves(r[carloan_schema().keys].to_numpy(float)).all()


def _engine(*args: str) -> subprocess.CompletedProcess:
    return run_module("recourse_engine", *args)


def test_experiment_is_still_listed_and_forwards_to_analysis(tmp_path):
    """`experiment` moved to `python -m analysis experiment`; for one release the engine's
    command says so on one stderr line and hands over, arguments and exit status intact."""
    assert "experiment" in _engine("--help").stdout
    helped = _engine("experiment", "--help")
    assert helped.returncode == 0, helped.stderr
    assert helped.stderr.splitlines() == [
        "note: `recourse-engine experiment` has moved to `recourse-analysis experiment` "
        "(`python -m analysis experiment`); running it there"
    ]
    assert helped.stdout.startswith("usage: python -m analysis experiment")
    assert "--epochs" in helped.stdout
    out = tmp_path / "o"
    bad = _engine("experiment", "--methods", "ebr,magic", "--out", str(out), "--quiet")
    assert bad.returncode == 2
    note, error = bad.stderr.splitlines()
    assert "python -m analysis experiment" in note
    assert error.startswith("error: unknown method 'magic'")
    assert not out.exists()


def test_the_engine_never_imports_analysis():
    """The engine is the ground floor: no module of it imports `analysis`, not even lazily."""
    import ast

    offenders = []
    for path in sorted((ROOT / "recourse_engine").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            offenders += [
                f"{path.relative_to(ROOT)}:{node.lineno} {n}"
                for n in names
                if n == "analysis" or n.startswith("analysis.")
            ]
    assert offenders == []
