"""Test-run wiring shared by every folder.

The suite runs on two pytest-xdist workers (`scripts/test`: `-n 2`). The tests that start
their own servers, workers or Chromium form two units of work, each run one after another on
one worker: the browser tests (each on its own embedded database, port and Chromium) and the
integration tests (which share PostgreSQL, Redis and the broker, so never two at once). The
two units run side by side, as one browser and one service stack wait on each other far more
than they compute; every other test file is a unit of its own, so its module fixtures are
built once. (xdist's own `--dist loadgroup` marks do not take effect
with this pytest: xdist renames `item._nodeid`, which pytest 9 no longer reads; the
scheduler hook below works on the test ids themselves.)
"""

from __future__ import annotations

from typing import Any

import pytest

#: the folders whose tests start servers, Celery workers or Chromium: one unit each
STACK_DIRS = ("tests/integration/", "tests/browser/")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    from xdist.scheduler import LoadFileScheduling

    class StackTogether(LoadFileScheduling):
        """One file per unit of work, except that each stack folder is a single unit."""

        def _split_scope(self, nodeid: str) -> str:
            for folder in STACK_DIRS:
                if nodeid.startswith(folder):
                    return folder
            return super()._split_scope(nodeid)

    return StackTogether(config, log)


@pytest.fixture(scope="module")
def one_torch_thread():
    """torch on one thread for a module's tests, restored after: the cores are shared with
    the other xdist worker and the tests' servers, and extra threads only contend."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
