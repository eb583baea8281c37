"""The warm interpreter's children run as a fresh process would: their own folder,
environment, streams, exit status and process group; nothing of the project's settings
imported before them; a child past its time is killed with its group."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests import warm_python

SCRIPT = """
import json, os, sys
print(json.dumps({
    "cwd": os.getcwd(), "env": os.environ.get("WARM_PROBE"), "argv": sys.argv,
    "settings": "studyapp.config.settings" in sys.modules,
    "django_configured": __import__("django.conf").conf.settings.configured,
    "pgid_is_pid": os.getpgid(0) == os.getpid(), "path0": sys.path[0],
}))
print("to stderr", file=sys.stderr)
if sys.argv[1:] == ["sleep"]:
    import time; time.sleep(60)
sys.exit(int(sys.argv[1]) if sys.argv[1:] and sys.argv[1].isdigit() else 0)
"""


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "probe.py"
    path.write_text(SCRIPT)
    return path


def test_a_child_has_its_own_folder_environment_streams_and_status(
    script: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    done = warm_python.run([str(script), "3"], work, {"WARM_PROBE": "x"}, timeout=60)
    seen = json.loads(done.stdout)
    assert done.returncode == 3 and done.stderr == "to stderr\n"
    assert seen["cwd"] == str(work) and seen["env"] == "x" and seen["argv"] == [str(script), "3"]
    assert seen["settings"] is False and seen["django_configured"] is False
    assert seen["pgid_is_pid"] and seen["path0"] == str(script.parent)
    again = warm_python.run([str(script)], work, {}, timeout=60)  # the next child: clean
    assert again.returncode == 0 and json.loads(again.stdout)["env"] is None


def test_a_child_past_its_time_is_killed(script: Path, tmp_path: Path) -> None:
    with pytest.raises(subprocess.TimeoutExpired):
        warm_python.run([str(script), "sleep"], tmp_path, {}, timeout=2)


def test_an_entry_point_runs_with_its_argv(tmp_path: Path) -> None:
    """As a console script: `recourse-study nosuch` ends with its one error line."""
    from tests.run_cli import STUDY

    done = warm_python.run([str(STUDY), "nosuch"], tmp_path, {"PATH": "/usr/bin:/bin"}, 120,
                           entry="recourse_study:main")  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr == "error: unknown command 'nosuch' (see recourse-study help)\n"


def test_a_module_runs_as_python_dash_m_from_its_folder(script: Path, tmp_path: Path) -> None:
    """`python -m probe 5` in the folder that holds probe.py: found there, argv as -m has it."""
    done = warm_python.run(["probe", "5"], tmp_path, {}, timeout=60, module="probe")
    seen = json.loads(done.stdout)
    assert done.returncode == 5, done.stderr
    assert seen["argv"] == [str(script), "5"] and seen["path0"] == str(tmp_path)
