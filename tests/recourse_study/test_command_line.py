"""`recourse-study` from a fresh folder, as a newcomer runs it: a command that needs the
database migrates the embedded one first; a failing command leaves no `var/` behind; a
database of DATABASE_URL is not migrated unasked; a missing extra is named in one line."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.run_cli import run_study

pytestmark = pytest.mark.slow


def test_a_data_command_in_a_fresh_folder_migrates_first(tmp_path: Path) -> None:
    done = run_study(["create_demo_study", "--pool-size", "50", "--no-admin"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "created study carloan: 50 pool profiles" in done.stdout
    assert done.stderr.startswith("recourse-study: set up the database ")
    assert (tmp_path / "var" / "db.sqlite3").is_file()
    again = run_study(["create_demo_study", "--pool-size", "50", "--no-admin"], tmp_path)
    assert again.returncode == 0 and again.stderr == ""  # migrated already: nothing said


def test_a_failing_command_leaves_no_var_folder(tmp_path: Path) -> None:
    done = run_study(["export_study", "nosuch", "--out", "export"], tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "nosuch" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_help_lists_serve_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Started cold, as the installed console script (the other tests use the warm one)."""
    monkeypatch.setenv("RECOURSE_WARM_PYTHON", "0")
    done = run_study(["help"], tmp_path)
    assert done.returncode == 0 and "export_study" in done.stdout
    assert "[recourse-study]\n    serve  (" in done.stdout
    assert list(tmp_path.iterdir()) == []


def test_a_database_of_database_url_is_not_migrated_unasked(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'lab.sqlite3'}"
    done = run_study(["export_study", "carloan", "--out", "export"], tmp_path, DATABASE_URL=url)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].startswith("error: the database of DATABASE_URL lacks ")
    assert "run `recourse-study migrate` first" in done.stderr
    assert len(done.stderr.splitlines()) == 1
    assert not (tmp_path / "var").exists() and not (tmp_path / "export").exists()


def test_a_missing_extra_is_named_in_one_line(tmp_path: Path) -> None:
    """As after a plain `pip install .`: Django is not importable."""
    code = "import sys; sys.modules['django'] = None; from recourse_study import main; sys.exit(main(['migrate']))"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "error: recourse-study needs the 'study' extra (no module named 'django'); "
        "install it with: pip install 'recourse-study-platform[study]'"
    ]
    assert list(tmp_path.iterdir()) == []


def test_serve_refuses_a_taken_port_before_setting_up_anything(tmp_path: Path) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        done = run_study(["serve"], tmp_path, PORT=str(port))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"error: port {port} on 127.0.0.1 is taken by another program; choose a free one "
        "with PORT=<port> (scripts/run) or --port <port>"
    ]
    assert list(tmp_path.iterdir()) == []


def test_serve_refuses_a_bad_port(tmp_path: Path) -> None:
    done = run_study(["serve", "--port", "http"], tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines() == ["error: --port must be a port number 1..65535, got 'http'"]
