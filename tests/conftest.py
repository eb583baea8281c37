"""Test-run wiring shared by every folder.

The suite runs on two pytest-xdist workers (`scripts/test`: `-n 2`). The tests that start
their own servers, workers or Chromium (everything under `tests/integration/` and
`tests/browser/`) form one unit of work, so they run one after another on one worker, never
two stacks at once on the same cores; every other test file is a unit of its own, so its
module fixtures are built once. (xdist's own `--dist loadgroup` marks do not take effect
with this pytest: xdist renames `item._nodeid`, which pytest 9 no longer reads; the
scheduler hook below works on the test ids themselves.)
"""

from __future__ import annotations

from typing import Any

import pytest

#: the folders whose tests start servers, Celery workers or Chromium
STACK_DIRS = ("tests/integration/", "tests/browser/")
STACK_UNIT = "stack"


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    from xdist.scheduler import LoadFileScheduling

    class StackTogether(LoadFileScheduling):
        """One file per unit of work, except that the stack tests are a single unit."""

        def _split_scope(self, nodeid: str) -> str:
            if nodeid.startswith(STACK_DIRS):
                return STACK_UNIT
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
