"""Bad input on the three command lines (`recourse-engine`, `recourse-analysis`,
`recourse-study`) ends the same way: one `error:` line on stderr, exit status 2, nothing
written. argparse's own errors and Django's CommandError included; `--no-progress` is
accepted by every command."""

from __future__ import annotations

import argparse
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from analysis.__main__ import build_parser as analysis_parser
from analysis.__main__ import main as analysis_main
from recourse_engine.cli import build_parser as engine_parser
from recourse_engine.cli import main as engine_main
from tests.run_cli import run_study

ROOT = Path(__file__).resolve().parents[1]
DEMO_EXPORT = ROOT / "examples" / "data" / "demo_export"


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def _status(main: Callable[[list[str]], int], args: list[str]) -> int:
    try:
        return main(args)
    except SystemExit as exc:
        return int(exc.code or 0)


def _assert_one_error(status: int, err: str) -> None:
    lines = err.strip().splitlines()
    assert status == 2, err
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "usage:" not in err and "Traceback" not in err


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    """A folder of CSVs, well-formed and broken, for the commands to read."""
    assert engine_main(["synth-pool", "--n", "60", "--out", str(tmp_path), "--no-progress"]) == 0
    pool = (tmp_path / "pool.csv").read_text().splitlines()
    (tmp_path / "ragged_pool.csv").write_text("\n".join([pool[0], *(r + ",7" for r in pool[1:])]))
    (tmp_path / "trailing_pool.csv").write_text("\n".join([pool[0], *(r + "," for r in pool[1:])]))
    ratings = "participant,sparsity,proximity,action\n" + "".join(
        f"{p},{s},{s / 3:.3f},{1 + (p + s) % 7}\n" for p in range(12) for s in range(1, 6)
    )
    (tmp_path / "ratings.csv").write_text(ratings)
    rows = ratings.splitlines()
    (tmp_path / "ragged.csv").write_text("\n".join([rows[0], rows[1], rows[2] + ",9", *rows[3:]]))
    (tmp_path / "trailing.csv").write_text("\n".join([rows[0], *(r + "," for r in rows[1:])]))
    (tmp_path / "negative.csv").write_text(ratings.replace("\n0,1,0.333,", "\n0,-1,0.333,", 1))
    (tmp_path / "infinite.csv").write_text(ratings.replace("\n0,1,0.333,", "\n0,1,inf,", 1))
    (tmp_path / "codings.csv").write_text("unit,coder,codes\n1:x,a,c1\n1:x,b,c1,extra\n")
    (tmp_path / "trailing_codings.csv").write_text("unit,coder,codes\n1:x,a,c1,\n1:x,b,c1,\n")
    (tmp_path / "negative_codings.csv").write_text(
        "unit,coder,codes,proximity\n1:x,a,c1,-0.5\n1:x,b,c1,0.5\n"
    )
    (tmp_path / "codes_without_unit.csv").write_text("unit,code\n1:x,c1\n,c2\n")
    header, *body = pool
    toeic = header.split(",").index("toeic")
    cells = body[2].split(",")
    cells[toeic] = "B2"  # a level where the item's option code belongs
    body[2] = ",".join(cells)
    (tmp_path / "wrong_type_pool.csv").write_text("\n".join([header, *body]) + "\n")
    trailing_export = tmp_path / "trailing_export"
    shutil.copytree(DEMO_EXPORT, trailing_export)
    ev = (trailing_export / "evaluations.csv").read_text().splitlines()
    rows_out = [ev[0], *(r + "," for r in ev[1:])]  # a trailing comma on every data row
    (trailing_export / "evaluations.csv").write_text("\n".join(rows_out) + "\n")
    negative_export = tmp_path / "negative_export"
    shutil.copytree(DEMO_EXPORT, negative_export)
    ev = (negative_export / "evaluations.csv").read_text().splitlines()
    header = ev[0].split(",")
    first = ev[1].split(",")
    first[header.index("proximity")] = "-0.5"
    ev[1] = ",".join(first)
    (negative_export / "evaluations.csv").write_text("\n".join(ev) + "\n")
    (tmp_path / "a_file").write_text("not a folder\n")
    return tmp_path


ENGINE_CASES = {
    "n is not a number": ["synth-pool", "--n", "abc", "--out", "{out}"],
    "n negative": ["synth-pool", "--n", "-1", "--out", "{out}"],
    "n zero": ["synth-pool", "--n", "0", "--out", "{out}", "--no-progress"],
    "seed negative": ["synth-pool", "--seed", "-1", "--out", "{out}"],
    "name with a folder": ["synth-pool", "--name", "a/b", "--out", "{out}"],
    "out is a file name": ["synth-pool", "--out", "{tmp}/pool.json"],
    "out is a file": ["synth-pool", "--out", "{tmp}/a_file"],
    "out's parent missing": ["synth-pool", "--out", "{tmp}/no/such"],
    "unknown command": ["nosuch"],
    "no command": [],
    "unknown option": ["synth-pool", "--out", "{out}", "--bogus"],
    "recourses without --pool": ["recourses", "--profiles", "{tmp}/pool.csv", "--out", "{out}"],
    "ragged pool": ["recourses", "--pool", "{tmp}/ragged_pool.csv", "--profiles",
                    "{tmp}/pool.csv", "--out", "{out}"],
    "trailing-comma profiles": ["recourses", "--pool", "{tmp}/pool.csv", "--profiles",
                                "{tmp}/trailing_pool.csv", "--out", "{out}", "--no-progress"],
    "missing pool": ["recourses", "--pool", "{tmp}/none.csv", "--profiles", "{tmp}/pool.csv",
                     "--out", "{out}"],
    "unknown strategy": ["recourses", "--pool", "{tmp}/pool.csv", "--profiles",
                         "{tmp}/pool.csv", "--design", "best:1", "--out", "{out}"],
    "missing schema": ["recourses", "--schema", "{tmp}/none.json", "--pool", "{tmp}/pool.csv",
                       "--profiles", "{tmp}/pool.csv", "--out", "{out}"],
    "unknown model kind": ["train-model", "--pool", "{tmp}/pool.csv", "--label", "x",
                           "--kind", "forest", "--out", "{out}"],
    "unknown label": ["train-model", "--pool", "{tmp}/pool.csv", "--label", "nosuch",
                      "--out", "{out}", "--no-progress"],
    "ragged training pool": ["train-model", "--pool", "{tmp}/ragged_pool.csv", "--label", "x",
                             "--out", "{out}"],
    "wrong type in a pool column": ["recourses", "--pool", "{tmp}/wrong_type_pool.csv",
                                    "--profiles", "{tmp}/pool.csv", "--out", "{out}"],
    "wrong type in a profiles column": ["recourses", "--pool", "{tmp}/pool.csv", "--profiles",
                                        "{tmp}/wrong_type_pool.csv", "--out", "{out}"],
    "wrong type in a training pool": ["train-model", "--pool", "{tmp}/wrong_type_pool.csv",
                                      "--label", "x", "--out", "{out}", "--no-progress"],
}  # fmt: skip

ANALYSIS_CASES = {
    "k not a number": ["gamm", "--input", "{tmp}/ratings.csv", "--outcome", "action",
                       "--distance", "sparsity", "--k", "abc"],
    "k too small": ["gamm", "--input", "{tmp}/ratings.csv", "--outcome", "action",
                    "--distance", "sparsity", "--k", "2", "--out", "{out}"],
    "ragged CSV": ["gamm", "--input", "{tmp}/ragged.csv", "--outcome", "action",
                   "--distance", "proximity", "--out", "{out}"],
    "trailing commas": ["gamm", "--input", "{tmp}/trailing.csv", "--outcome", "action",
                        "--distance", "proximity", "--out", "{out}", "--no-progress"],
    "negative distance in a plain CSV": ["gamm", "--input", "{tmp}/negative.csv", "--outcome",
                                         "action", "--distance", "proximity", "--out", "{out}"],
    "missing input": ["gamm", "--input", "{tmp}/none.csv", "--outcome", "action",
                      "--distance", "sparsity", "--out", "{out}"],
    "unknown column": ["gamm", "--input", "{tmp}/ratings.csv", "--outcome", "nosuch",
                       "--distance", "sparsity", "--out", "{out}"],
    "formula and outcome": ["gamm", "--input", "{tmp}/ratings.csv", "--formula", "action ~ 1",
                            "--outcome", "action"],
    "unknown method": ["gamm", "--input", "{tmp}/ratings.csv", "--method", "GCV"],
    "runs negative": ["experiment", "--runs", "-1", "--out", "{out}"],
    "runs not a number": ["experiment", "--runs", "abc", "--out", "{out}"],
    "unknown dataset": ["experiment", "--dataset", "nosuch", "--out", "{out}", "--no-progress"],
    "unknown method name": ["experiment", "--methods", "ebr,magic", "--out", "{out}"],
    "bad param": ["experiment", "--methods", "ebr", "--param", "ebr", "--out", "{out}"],
    "reproduce zero runs": ["reproduce", "--dataset", "adult", "--runs", "0", "--out", "{out}"],
    "segregation ragged": ["segregation", "--input", "{tmp}/ragged.csv", "--group",
                           "participant", "--features", "sparsity", "--out", "{out}"],
    "gamm infinite distance": ["gamm", "--input", "{tmp}/infinite.csv", "--outcome", "action",
                               "--distance", "sparsity", "--out", "{out}"],
    "gamm formula negative distance": ["gamm", "--input", "{tmp}/negative.csv", "--formula",
                                       "action ~ s(proximity)", "--out", "{out}"],
    "segregation trailing commas": ["segregation", "--input", "{tmp}/trailing.csv", "--group",
                                    "participant", "--features", "sparsity", "--out", "{out}"],
    "segregation negative distance": ["segregation", "--input", "{tmp}/negative.csv", "--group",
                                      "participant", "--features", "proximity", "--out",
                                      "{out}"],
    "segregation infinite distance": ["segregation", "--input", "{tmp}/infinite.csv", "--group",
                                     "participant", "--features", "proximity", "--out",
                                     "{out}", "--no-progress"],
    "segregation eps quantile": ["segregation", "--input", "{tmp}/ratings.csv", "--group",
                                 "participant", "--features", "sparsity", "--eps-quantile",
                                 "2", "--out", "{out}"],
    "study trailing commas in the export": ["study", "--export", "{tmp}/trailing_export",
                                            "--out", "{out}", "--no-progress"],
    "study negative distance in the export": ["study", "--export", "{tmp}/negative_export",
                                              "--out", "{out}"],
    "study k not a number": ["study", "--export", str(DEMO_EXPORT), "--k", "abc",
                             "--out", "{out}"],
    "methods missing export": ["methods", "--export", "{tmp}/none", "--out", "{out}",
                               "--no-progress"],
    "methods trailing commas": ["methods", "--export", "{tmp}/trailing_export", "--out",
                                "{out}"],
    "to-r missing export": ["to-r", "--export", "{tmp}/none", "--out", "{out}",
                            "--no-progress"],
    "effects zero bootstrap": ["effects", "--export", str(DEMO_EXPORT), "--group", "gender",
                               "--bootstrap", "0", "--out", "{out}"],
    "effects unknown group": ["effects", "--export", str(DEMO_EXPORT), "--group", "nosuch",
                              "--out", "{out}", "--no-progress"],
    "coding ragged codings": ["coding", "agreement", "--codings", "{tmp}/codings.csv",
                              "--out", "{out}", "--no-progress"],
    "coding trailing commas": ["coding", "agreement", "--codings",
                               "{tmp}/trailing_codings.csv", "--out", "{out}"],
    "coding negative distance": ["coding", "agreement", "--codings",
                                 "{tmp}/negative_codings.csv", "--out", "{out}"],
    "coding codes without a unit": ["coding", "quotes", "--export", str(DEMO_EXPORT),
                                    "--codings", "{tmp}/codes_without_unit.csv", "--code", "c1",
                                    "--out", "{out}"],
    "coding k not a number": ["coding", "suggest", "--export", str(DEMO_EXPORT), "--field",
                              "action_why", "--k", "abc", "--out", "{out}"],
    "coding bad band": ["coding", "quotes", "--export", str(DEMO_EXPORT), "--ratings", "x",
                        "--out", "{out}"],
    "coding no step": ["coding"],
    "unknown command": ["nosuch"],
    "no command": [],
    "out is a file": ["to-r", "--export", str(DEMO_EXPORT), "--out", "{tmp}/a_file"],
}  # fmt: skip


def _fill(args: list[str], tmp: Path) -> list[str]:
    return [a.format(tmp=tmp, out=tmp / "out") for a in args]


@pytest.mark.parametrize("args", ENGINE_CASES.values(), ids=ENGINE_CASES)
def test_engine_bad_input(inputs: Path, capsys: pytest.CaptureFixture, args: list[str]) -> None:
    before = _files(inputs)
    status = _status(engine_main, _fill(args, inputs))
    _assert_one_error(status, capsys.readouterr().err)
    assert _files(inputs) == before


@pytest.mark.parametrize("args", ANALYSIS_CASES.values(), ids=ANALYSIS_CASES)
def test_analysis_bad_input(inputs: Path, capsys: pytest.CaptureFixture, args: list[str]) -> None:
    before = _files(inputs)
    status = _status(analysis_main, _fill(args, inputs))
    _assert_one_error(status, capsys.readouterr().err)
    assert _files(inputs) == before


DISTANCE_CASES = {name: args for name, args in ANALYSIS_CASES.items() if "distance" in name}


@pytest.mark.parametrize("args", DISTANCE_CASES.values(), ids=DISTANCE_CASES)
def test_a_bad_distance_is_what_is_refused(
    inputs: Path, capsys: pytest.CaptureFixture, args: list[str]
) -> None:
    """The same rule for a distance in an export and in every plain CSV: the refusal names
    the distance, not a later problem of the same file."""
    assert _status(analysis_main, _fill(args, inputs)) == 2
    err = capsys.readouterr().err
    assert re.search(r"row 1, column '(sparsity|proximity)': (-[\d.]+ is below 0|inf is not a "
                     r"finite number)$", err.strip()), err  # fmt: skip


WRONG_TYPE_CASES = {name: args for name, args in ENGINE_CASES.items() if "wrong type" in name}


@pytest.mark.parametrize("args", WRONG_TYPE_CASES.values(), ids=WRONG_TYPE_CASES)
def test_a_wrong_type_in_a_pool_column_is_named(
    inputs: Path, capsys: pytest.CaptureFixture, args: list[str]
) -> None:
    assert _status(engine_main, _fill(args, inputs)) == 2
    err = capsys.readouterr().err
    assert err.endswith("wrong_type_pool.csv: row 3, column 'toeic': 'B2' is not an option code "
                        "1..8\n"), err  # fmt: skip


def test_ragged_rows_are_named_by_line(inputs: Path, capsys: pytest.CaptureFixture) -> None:
    """A row with one field too many is refused with its line, never read shifted."""
    args = ["gamm", "--input", f"{inputs}/ragged.csv", "--outcome", "action", "--distance",
            "proximity"]  # fmt: skip
    assert _status(analysis_main, args) == 2
    assert "ragged.csv: line 3 has 5 fields, the header 4" in capsys.readouterr().err
    args = ["recourses", "--pool", f"{inputs}/pool.csv", "--profiles",
            f"{inputs}/trailing_pool.csv", "--out", f"{inputs}/o"]  # fmt: skip
    assert _status(engine_main, args) == 2
    err = capsys.readouterr().err
    assert "trailing_pool.csv: line 2 has" in err and "(a trailing comma)" in err


def test_the_usage_block_becomes_one_line_pointing_at_help(capsys: pytest.CaptureFixture) -> None:
    assert _status(analysis_main, ["gamm", "--input", "x.csv", "--k", "abc"]) == 2
    assert capsys.readouterr().err == (
        "error: argument --k: invalid int value: 'abc' (see python -m analysis gamm --help)\n"
    )


def _commands(
    parser: argparse.ArgumentParser, name: str = ""
) -> dict[str, argparse.ArgumentParser]:
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return {name: parser}
    found: dict[str, argparse.ArgumentParser] = {}
    for sub, child in subs[0].choices.items():
        found |= _commands(child, f"{name} {sub}".strip())
    return found


def test_every_engine_and_analysis_command_accepts_no_progress() -> None:
    commands = {**_commands(engine_parser()), **_commands(analysis_parser())}
    commands.pop("experiment", None)  # the engine's forwarding stub; analysis has the real one
    commands["experiment"] = _commands(analysis_parser())["experiment"]
    lacking = [n for n, p in commands.items() if "--no-progress" not in p._option_string_actions]
    assert lacking == [] and len(commands) >= 14


# --- recourse-study: Django's management commands, run as a user runs them -----------------


@pytest.fixture(scope="module")
def study_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder whose database holds the demo study `carloan`."""
    folder = tmp_path_factory.mktemp("study")
    made = run_study(["create_demo_study", "--pool-size", "20", "--no-admin"], folder)
    assert made.returncode == 0, made.stderr
    return folder


STUDY_CASES = {
    "unknown command": ["nosuch"],
    "unknown study": ["export_study", "nosuch", "--out", "out"],
    "design nosuch on an existing slug": ["create_demo_study", "--design", "nosuch",
                                          "--slug", "carloan", "--no-admin"],
    "pool size not a number": ["create_demo_study", "--pool-size", "abc"],
    "pool size out of range": ["create_demo_study", "--pool-size", "3", "--slug", "x"],
    "unknown language": ["create_demo_study", "--language", "xx", "--slug", "x"],
    "export without --out": ["export_study", "carloan"],
    "export to a file": ["export_study", "carloan", "--out", "var/db.sqlite3"],
    "unknown option": ["export_study", "carloan", "--out", "out", "--bogus"],
    "now not a time": ["release_due", "--now", "yesterday"],
    "now without a zone": ["release_due", "--now", "2030-01-01T09:00:00", "--no-progress"],
    "retention of an unknown study": ["apply_retention", "nosuch"],
    "retention now not a time": ["apply_retention", "carloan", "--now", "yesterday"],
    "n zero": ["simulate_participants", "carloan", "--n", "0"],
    "n not a number": ["simulate_participants", "carloan", "--n", "many"],
    "share out of range": ["simulate_participants", "carloan", "--ineligible", "2"],
    "url malformed": ["simulate_participants", "carloan", "--url", "ftp://x"],
    "sample not a number": ["check_design", "carloan", "--sample", "abc"],
    "no stored check": ["check_design", "carloan", "--stored", "--no-progress"],
    "translation into a language the study lacks": ["translations", "carloan", "export", "fr",
                                                    "--out", "fr.po"],
    "translation file missing": ["translations", "carloan", "import", "en", "nosuch.po"],
}  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("args", STUDY_CASES.values(), ids=STUDY_CASES)
def test_study_bad_input(study_folder: Path, args: list[str]) -> None:
    before = _files(study_folder)
    db = (study_folder / "var" / "db.sqlite3").read_bytes()
    done = run_study(args, study_folder)
    _assert_one_error(done.returncode, done.stderr)
    assert "CommandError" not in done.stderr
    assert _files(study_folder) == before
    assert (study_folder / "var" / "db.sqlite3").read_bytes() == db


@pytest.mark.slow
def test_study_bad_input_in_a_fresh_folder_leaves_nothing(tmp_path: Path) -> None:
    """The embedded database is set up (one note), the command refused (the last line)."""
    done = run_study(["create_demo_study", "--design", "nosuch"], tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].startswith("error: --design 'nosuch': ")
    assert [line for line in done.stderr.splitlines() if line.startswith("error:")] == [
        done.stderr.splitlines()[-1]
    ]
    assert _files(tmp_path) == []


@pytest.mark.slow
def test_study_unmigrated_database(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'lab.sqlite3'}"
    done = run_study(["export_study", "carloan", "--out", "out"], tmp_path, DATABASE_URL=url)
    _assert_one_error(done.returncode, done.stderr)
    assert "run `recourse-study migrate` first" in done.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "var").exists()


def test_every_study_command_accepts_no_progress() -> None:
    from django.core.management import load_command_class

    folder = ROOT / "studyapp" / "management" / "commands"
    names = sorted(p.stem for p in folder.glob("*.py") if p.stem != "__init__")
    for name in names:
        parser = load_command_class("studyapp", name).create_parser("recourse-study", name)
        assert "--no-progress" in parser._option_string_actions, name
    assert len(names) >= 5
