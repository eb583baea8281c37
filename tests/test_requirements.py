"""One source for dependencies: pyproject.toml names them, and the pinned requirements*.txt are
generated from it by `scripts/lock` (pip-tools' pip-compile). A hand edit of either side
fails here: every package pyproject.toml names for a file is pinned there within its range,
and every pin is named by pyproject.toml or needed by another pin (pip-compile's `# via`
notes). The tests themselves import only packages the `dev` extra names, so
`pip install ".[dev]"` runs `scripts/test`."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
PROJECT = "recourse-study-platform"
#: how pip-compile names the project in `# via` (plain where the dev extra's `PROJECT[all]` led)
VIA_PROJECT = {f"{PROJECT} (pyproject.toml)", PROJECT}
#: each generated file and the lists of pyproject.toml it is compiled from
FILES = {
    "requirements.txt": ["dependencies", "methods", "study"],
    "requirements-dev.txt": ["dependencies", "dev"],
}
OWN_PACKAGES = {"tests", "recourse_engine", "analysis", "studyapp", "recourse_study", "benchmarks"}
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==(\S+)")


def declared(project: dict, lists: list[str]) -> dict[str, Requirement]:
    """The requirements of the named lists, self-references (`PROJECT[all]`) expanded."""
    extras = project.get("optional-dependencies", {})
    out: dict[str, Requirement] = {}
    todo = list(lists)
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for text in project["dependencies"] if name == "dependencies" else extras[name]:
            req = Requirement(text)
            if canonicalize_name(req.name) == PROJECT:
                todo.extend(req.extras)
            else:
                out[canonicalize_name(req.name)] = req
    return out


def pinned(text: str) -> dict[str, tuple[str, set[str], set[str]]]:
    """name -> (version, extras, the `# via` sources) of a pip-compile output."""
    out: dict[str, tuple[str, set[str], set[str]]] = {}
    current = None
    for line in text.splitlines():
        match = _PIN.match(line)
        if match:
            extras = set(filter(None, (match.group(2) or "[]")[1:-1].split(",")))
            current = canonicalize_name(match.group(1))
            out[current] = (match.group(3), extras, set())
        elif current and line.startswith("    # "):
            source = line.strip()[1:].strip()
            source = source.removeprefix("via").strip()
            if source:
                out[current][2].add(source)
        elif not line.startswith("#"):
            current = None
    return out


def disagreements(project: dict, files: dict[str, str]) -> list[str]:
    """Every way the requirement files (name -> text) differ from pyproject's lists."""
    problems: list[str] = []
    versions: dict[str, tuple[str, str]] = {}
    for name, text in files.items():
        wanted = declared(project, FILES[name])
        pins = pinned(text)
        for key, req in sorted(wanted.items()):
            if key not in pins:
                problems.append(f"{name}: {req} is in pyproject.toml but not pinned")
                continue
            version, extras, via = pins[key]
            if not req.specifier.contains(Version(version), prereleases=True):
                problems.append(f"{name}: {key}=={version} is outside pyproject's {req}")
            if not set(req.extras) <= extras:
                problems.append(f"{name}: {key} is pinned without the extras of {req}")
            if not via & VIA_PROJECT:
                problems.append(f"{name}: {key} is in pyproject.toml; the file is older")
        for key, (version, _, via) in sorted(pins.items()):
            if via & VIA_PROJECT and key not in wanted:
                problems.append(f"{name}: {key}=={version} is pinned but not in pyproject.toml")
            if not {v for v in via if not v.startswith("-c ")}:
                problems.append(f"{name}: {key}=={version} is needed by nothing (no `# via`)")
            unknown = sorted(
                v for v in via if not v.startswith("-c ") and v not in VIA_PROJECT
                and canonicalize_name(v) not in pins
            )  # fmt: skip
            if unknown:
                problems.append(f"{name}: {key} is needed by {unknown}, which are not pinned")
            if key in versions and versions[key][0] != version:
                other, was = versions[key][1], versions[key][0]
                problems.append(f"{name}: {key}=={version} but {other} pins {was}")
            versions.setdefault(key, (version, name))
    return problems


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _files() -> dict[str, str]:
    return {name: (ROOT / name).read_text() for name in FILES}


def test_the_requirement_files_are_generated_from_pyproject() -> None:
    assert disagreements(_project(), _files()) == [], "run scripts/lock"


def test_a_hand_edit_of_either_side_is_found() -> None:
    project, files = _project(), _files()
    files["requirements.txt"] = files["requirements.txt"].replace("\nscipy==", "\nscipy-x==")
    files["requirements-dev.txt"] += (
        "leftover==1.0\n    # via recourse-study-platform (pyproject.toml)\n"
    )
    project = {**project, "dependencies": [*project["dependencies"], "tomli-w>=1"]}
    problems = disagreements(project, files)
    assert "requirements.txt: scipy>=1.13 is in pyproject.toml but not pinned" in problems
    assert "requirements.txt: tomli-w>=1 is in pyproject.toml but not pinned" in problems
    assert "requirements-dev.txt: leftover==1.0 is pinned but not in pyproject.toml" in problems


def test_torch_stays_on_its_release() -> None:
    for name in FILES:
        assert pinned((ROOT / name).read_text())["torch"][0] == "2.13.0", name


def test_the_tests_import_only_what_the_dev_extra_names() -> None:
    """`pip install ".[dev]"` is enough for the test command: each third-party package a
    test imports comes from a distribution the dev extra names (directly or through `all`)."""
    wanted = declared(_project(), ["dependencies", "dev"])
    owners = importlib.metadata.packages_distributions()
    missing = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for top in {n.split(".")[0] for n in names}:
                if top in sys.stdlib_module_names or top in OWN_PACKAGES:
                    continue
                dists = {canonicalize_name(d) for d in owners.get(top, [])}
                if not dists & set(wanted):
                    missing.append(f"{path.relative_to(ROOT)}: {top} ({sorted(dists)})")
    assert not missing, "add them to pyproject's dev extra, then scripts/lock"


def test_the_locks_name_no_path_of_this_machine() -> None:
    """pip-compile writes the dev extra's self-reference as `... @ file:///<checkout>`, a path
    no other machine has (a fresh clone's `pip install -r` would fail or install another
    tree); scripts/lock drops it and scripts/setup installs the project itself."""
    for name in FILES:
        text = (ROOT / name).read_text(encoding="utf-8")
        assert not re.search(r"@ file:", text), name
        assert not re.search(rf"^{PROJECT}\b", text, flags=re.M), name
