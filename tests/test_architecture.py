"""The house rules the layer contracts (`lint-imports`) cannot state: no import cycles but the
services <-> tasks pair, and no source file so long that it holds several concerns."""

from __future__ import annotations

from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("recourse_engine", "analysis", "studyapp")
MAX_LINES = 500

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


def test_no_source_file_over_the_limit() -> None:
    long = {
        str(p.relative_to(ROOT)): n
        for p in _sources()
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}, f"files over {MAX_LINES} lines (split them by concern): {long}"
