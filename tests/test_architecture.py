"""The house rules the layer contracts (`lint-imports`) cannot state: no import cycles but the
services <-> tasks pair, and no source file so long that it holds several concerns.

Length is a prompt to look, not a rule to split by: a file above `LIST_LINES` is listed (a
warning in the test report: does it still hold one concern?), and only one above `MAX_LINES`
fails. A file that holds one concern reads better whole than cut in two at a line count.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("recourse_engine", "analysis", "studyapp")
#: a source file above this many lines fails the test
MAX_LINES = 600
#: a source file above this many lines is listed in the test report
LIST_LINES = 400


class LongFileWarning(UserWarning):
    """Source files above LIST_LINES lines: worth a look, not a failure."""


#: the usual services <-> tasks pair: a service queues a task with `transaction.on_commit`,
#: the task calls the service back (both sides import lazily, inside functions)
ALLOWED_CYCLE = {"studyapp.generation.method_fitting", "studyapp.generation.tasks"}


def _build() -> grimp.ImportGraph:
    # imports under `if TYPE_CHECKING:` never run, so they cannot form a cycle at import time
    return grimp.build_graph(*PACKAGES, cache_dir=None, exclude_type_checking_imports=True)


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return _build()


def _cycle_members(graph: grimp.ImportGraph) -> set[str]:
    """Every module on an import cycle: an import a -> b is on one when b leads back to a."""
    members: set[str] = set()
    for importer in graph.modules:
        for imported in graph.find_modules_directly_imported_by(importer):
            if graph.find_shortest_chain(importer=imported, imported=importer):
                members |= {importer, imported}
    return members


def test_no_import_cycles_but_services_and_tasks(graph: grimp.ImportGraph) -> None:
    on_cycles = _cycle_members(graph)
    assert on_cycles - ALLOWED_CYCLE == set(), f"modules on import cycles: {sorted(on_cycles)}"


def test_the_cycle_check_finds_a_cycle(graph: grimp.ImportGraph) -> None:
    """The check above can fail: an import added back from the engine bridge is found."""
    g = _build()
    g.add_import(importer="recourse_engine.schema", imported="recourse_engine.selection")
    assert {"recourse_engine.schema", "recourse_engine.selection"} <= _cycle_members(g)


def _sources() -> list[Path]:
    return sorted(
        p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py") if "migrations" not in p.parts
    )


def _lengths() -> dict[str, int]:
    return {
        str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines())
        for p in _sources()
    }


def _over(lengths: Mapping[str, int], limit: int) -> dict[str, int]:
    """The files longer than `limit` lines, longest first."""
    return dict(sorted(((f, n) for f, n in lengths.items() if n > limit), key=lambda x: -x[1]))


def test_no_source_file_over_the_limit() -> None:
    lengths = _lengths()
    assert len(lengths) > 100
    long = _over(lengths, MAX_LINES)
    assert long == {}, f"files over {MAX_LINES} lines (one concern each? split by concern): {long}"
    listed = _over(lengths, LIST_LINES)
    if listed:
        table = "\n".join(f"  {n:4d} {f}" for f, n in listed.items())
        warnings.warn(
            f"{len(listed)} files over {LIST_LINES} lines (does each hold one concern?):\n{table}",
            LongFileWarning,
            stacklevel=1,
        )


def test_the_length_rule_fails_above_the_limit_and_lists_above_the_mark() -> None:
    lengths = {"a.py": MAX_LINES + 1, "b.py": MAX_LINES, "c.py": LIST_LINES + 1, "d.py": LIST_LINES}
    assert _over(lengths, MAX_LINES) == {"a.py": MAX_LINES + 1}
    assert list(_over(lengths, LIST_LINES)) == ["a.py", "b.py", "c.py"]
