"""Test-run wiring shared by every folder.

The suite runs on two pytest-xdist workers (`scripts/test`: `-n 2 --dist loadgroup`). Tests
that start their own servers, workers or Chromium (`integration`, `browser`) share one group,
so they run one after another on one worker, never two stacks at once on the same cores;
every other test file is a group of its own, so its module fixtures are built once.
"""

from __future__ import annotations

import pytest

STACK_GROUP = "stack"


def pytest_configure(config: pytest.Config) -> None:
    # pytest-xdist registers the marker itself; a run without it (-p no:xdist) needs it too
    config.addinivalue_line("markers", "xdist_group(name): tests that share one xdist worker")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("xdist_group"):
            continue
        heavy = item.get_closest_marker("integration") or item.get_closest_marker("browser")
        group = STACK_GROUP if heavy else item.nodeid.split("::", 1)[0]
        item.add_marker(pytest.mark.xdist_group(group))
