"""Test-run wiring shared by every folder.

The suite runs on two pytest-xdist workers (`scripts/test`: `-n 2`). The tests that start
their own servers, workers or Chromium (everything under `tests/integration/` and
`tests/browser/`) form one unit of work, so they run one after another on one worker, never
two stacks at once on the same cores; every other test file is a unit of its own, so its
module fixtures are built once. (xdist's own `--dist loadgroup` marks do not take effect
with this pytest: xdist renames `item._nodeid`, which pytest 9 no longer reads; the
scheduler hook below works on the test ids themselves.)

The stack unit goes first, to worker `gw0`, and the other workers run at a lower CPU
priority (`os.nice`) whenever the run holds stack tests: those tests wait on pages, queues
and timeouts of processes they started, so the batch tests beside them take the cycles
they leave idle instead of slowing them down (the stack is the longest unit: its wall time
is the suite's).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from typing import Any

import pytest

# each test process (every xdist worker imports this file again) writes /metrics' samples
# (studyapp.metrics) to a folder of its own, set before anything imports that package: a
# folder inherited from the controller would mix the other worker's counts into its own
os.environ["STUDYAPP_METRICS_DIR"] = tempfile.mkdtemp(prefix="recourse-metrics-")
atexit.register(shutil.rmtree, os.environ["STUDYAPP_METRICS_DIR"], True)

#: the folders whose tests start servers, Celery workers or Chromium
STACK_DIRS = ("tests/integration/", "tests/browser/")
STACK_UNIT = "stack"
#: the worker that runs the stack unit, and how much lower the others' priority is
STACK_WORKER = "gw0"
BATCH_NICENESS = 10
#: the other files whose tests take longest (`--durations`), handed out before the rest so
#: that none of them starts last and ends the run alone
LONG_UNITS = (
    "tests/test_doc_commands.py",
    "tests/analysis/experiment/test_settings.py",
    "tests/studyapp/studies/test_design_check_bots.py",
    "tests/test_cli_errors.py",
    "tests/studyapp/test_commands.py",
    "tests/analysis/experiment/test_run.py",
)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    from xdist.scheduler import LoadFileScheduling

    class StackTogether(LoadFileScheduling):
        """One file per unit of work, except that the stack tests are a single unit, which
        `STACK_WORKER` takes first and no other worker takes while it is there; the
        `LONG_UNITS` go out next."""

        def _split_scope(self, nodeid: str) -> str:
            if nodeid.startswith(STACK_DIRS):
                return STACK_UNIT
            return super()._split_scope(nodeid)

        def _assign_work_unit(self, node: Any) -> None:
            queue = self.workqueue
            for unit in reversed(LONG_UNITS):
                if unit in queue:
                    queue.move_to_end(unit, last=False)
            if STACK_UNIT in queue and len(queue) > 1:
                if node.workerinput["workerid"] == STACK_WORKER:
                    queue.move_to_end(STACK_UNIT, last=False)
                elif next(iter(queue)) == STACK_UNIT:
                    queue.move_to_end(STACK_UNIT, last=True)
            super()._assign_work_unit(node)

    return StackTogether(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On a worker other than `STACK_WORKER`, lower this process's priority (and so its
    children's) when the run holds stack tests."""
    worker = getattr(config, "workerinput", {}).get("workerid")
    if worker and worker != STACK_WORKER and any(i.nodeid.startswith(STACK_DIRS) for i in items):
        os.nice(BATCH_NICENESS)


@pytest.fixture(scope="module")
def one_torch_thread():
    """torch on one thread for a module's tests, restored after: the cores are shared with
    the other xdist worker and the tests' servers, and extra threads only contend."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
