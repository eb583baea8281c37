"""`pip install .` works: a wheel built from the project, installed into a fresh virtual
environment, gives the three console commands, and each answers `--help` and runs one real
command from a folder outside the repository (nothing of the checkout on sys.path).

The fresh environment reuses the test environment's third-party packages through a path
entry (so torch and Django are not downloaded again); the project itself comes only from
the wheel, which the test checks by where the packages are imported from."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("recourse_engine", "analysis", "studyapp", "recourse_study")
COMMANDS = ("recourse-engine", "recourse-analysis", "recourse-study")
FIXTURE = ROOT / "tests" / "analysis" / "gamm" / "fixtures" / "study_steep.csv"
EXPORT = ROOT / "examples" / "data" / "demo_export"

pytestmark = pytest.mark.slow


def _run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 600):
    done = subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"{cmd}\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path, dict[str, str]]:
    tmp = tmp_path_factory.mktemp("packaging")
    src = tmp / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for pkg in PACKAGES:
        shutil.copytree(ROOT / pkg, src / pkg, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "STUDYAPP_VAR_DIR")}
    dist = tmp / "dist"
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
        + ["-w", str(dist), str(src)],
        tmp,
        env,
    )
    (wheel,) = dist.glob("*.whl")
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], tmp, env)
    py = venv / "bin" / "python"
    site = Path(
        _run(
            [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp, env
        ).stdout.strip()
    )
    # third-party packages from the test environment, after the venv's own site-packages
    (site / "zz_test_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    # --ignore-installed: under a non-editable `pip install ".[dev]"` the test environment's
    # site-packages (on the path above) already hold the project, which pip would take as
    # this wheel installed and then install nothing here
    _run(
        [str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--ignore-installed"]
        + [str(wheel)],
        tmp,
        env,
    )
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    work = tmp / "work"
    work.mkdir()
    return wheel, venv, env | {"_WORK": str(work), "_SITE": str(site)}


def test_the_wheel_holds_the_packages_and_their_data(installed):
    wheel, _, _ = installed
    names = zipfile.ZipFile(wheel).namelist()
    for pkg in PACKAGES:
        assert f"{pkg}/__init__.py" in names, pkg
    assert "recourse_engine/data/carloan_schema.json" in names
    assert "analysis/r/analysis.R" in names
    assert "recourse_engine/data/datasets/adult.data.gz" in names
    assert "studyapp/static/studyapp/study.css" in names
    assert "studyapp/jinja2/studyapp/base.html" in names
    assert "studyapp/jinja2/studyapp/_field.html" in names
    assert "studyapp/templates/admin/studyapp/study/change_form.html" in names
    assert "studyapp/locale/ja/LC_MESSAGES/django.mo" in names
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry).decode()
    for command in COMMANDS:
        assert f"{command} = " in text


def test_packages_come_from_the_installed_wheel(installed):
    _, venv, env = installed
    work = Path(env["_WORK"])
    done = _run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import analysis, recourse_engine, studyapp; "
            "print(analysis.__file__, recourse_engine.__file__, studyapp.__file__)",
        ],
        work,
        env,
    )
    for path in done.stdout.split():
        assert Path(path).is_relative_to(env["_SITE"]), path


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_answers_help(installed, command):
    _, venv, env = installed
    done = _run([str(venv / "bin" / command), "--help"], Path(env["_WORK"]), env)
    if command == "recourse-study":  # Django's help: the management commands by app
        assert "Type 'recourse-study help <subcommand>'" in done.stdout
        for sub in ("create_demo_study", "simulate_participants", "export_study", "serve"):
            assert sub in done.stdout
        serve = _run([str(venv / "bin" / command), "serve", "--help"], Path(env["_WORK"]), env)
        assert serve.stdout.startswith("usage: recourse-study serve ")
    else:
        assert done.stdout.startswith(f"usage: {command} ")


def test_real_commands_from_a_folder_outside_the_checkout(installed):
    _, venv, env = installed
    work = Path(env["_WORK"])
    bin_ = venv / "bin"
    _run([str(bin_ / "recourse-engine"), "synth-pool", "--n", "40", "--out", "pools"], work, env)
    assert len((work / "pools" / "pool.csv").read_text().splitlines()) == 41
    done = _run(
        [str(bin_ / "recourse-analysis"), "gamm", "--input", str(FIXTURE), "--outcome", "action"]
        + ["--distance", "sparsity", "--out", "gamm"],
        work,
        env,
    )
    assert "s(sparsity)" in done.stdout and (work / "gamm" / "gamm.json").is_file()
    _run(
        [str(bin_ / "recourse-analysis"), "to-r", "--export", str(EXPORT), "--out", "r"], work, env
    )
    assert (work / "r" / "analysis.R").is_file() and (work / "r" / "evaluations.rds").is_file()
    # the study's command line keeps its database in ./var of the folder it runs in
    _run([str(bin_ / "recourse-study"), "migrate", "-v0"], work, env)
    assert (work / "var" / "db.sqlite3").is_file()
    # the participant pages' templates come from the installed package
    probe = "from django.template.loader import get_template as g; print(g('studyapp/base.html').origin.name)"
    done = _run([str(bin_ / "recourse-study"), "shell", "-v0", "-c", probe], work, env)
    assert done.stdout.strip().startswith(env["_SITE"]), done.stdout


def test_settings_imported_outside_the_command_keep_site_files_out_of_site_packages(installed):
    """A WSGI server or a script imports the settings without `recourse-study`: the database
    and the site's templates folder are still the working folder's, not site-packages'."""
    _, venv, env = installed
    work = Path(env["_WORK"])
    probe = (
        "import os; os.environ['DJANGO_SETTINGS_MODULE'] = 'studyapp.config.settings'; "
        "from django.conf import settings as s; "
        "print(s.DATABASES['default']['NAME']); print(s.SITE_TEMPLATES_DIR)"
    )
    done = _run([str(venv / "bin" / "python"), "-c", probe], work, env)
    database, templates = done.stdout.split()
    assert Path(database) == work.resolve() / "var" / "db.sqlite3"
    assert Path(templates) == work / "templates"


def test_a_plain_install_names_the_missing_extra(installed, tmp_path: Path) -> None:
    """`pip install .` without `[study]`: recourse-study says which extra to install, in one
    line, and leaves nothing behind."""
    wheel, _, env = installed
    bare = tmp_path / "bare"
    _run([sys.executable, "-m", "venv", str(bare)], tmp_path, env)
    py = str(bare / "bin" / "python")
    _run([py, "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], tmp_path, env)
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run(
        [str(bare / "bin" / "recourse-study"), "migrate"],
        cwd=work, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "error: recourse-study needs the 'study' extra (no module named 'django'); "
        "install it with: pip install 'recourse-study-platform[study]'"
    ]
    assert list(work.iterdir()) == []
