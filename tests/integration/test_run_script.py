"""The README's run command: scripts/run serves the demo study with a worker beside the web
server, prints the participant link and admin login, and Ctrl-C stops both."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from tests.integration.stack import ROOT, embedded_env, free_port

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return [int(x) for x in out.stdout.split()]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"


def test_run_serves_the_demo_and_ctrl_c_stops_both(tmp_path: Path) -> None:
    port = free_port()
    env = {**embedded_env(tmp_path), "PORT": str(port)}
    log = tmp_path / "run.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [str(ROOT / "scripts" / "run")],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while "Press Ctrl-C" not in log.read_text():
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.5)
        text = log.read_text()
        link = f"http://127.0.0.1:{port}/s/carloan/"
        assert f"Participant link: {link}" in text
        password = (tmp_path / "admin-password").read_text().strip()
        assert f"user admin  password {password}" in text
        children = _children(proc.pid)
        assert len(children) == 2  # the worker and gunicorn
        for _ in range(60):  # gunicorn may still be binding its workers
            try:
                with urllib.request.urlopen(link, timeout=5) as r:
                    # the welcome page: its start button creates the participant
                    assert r.status == 200 and "Start the study" in r.read().decode()
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("the participant link did not answer")
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C sends to the terminal's group
        proc.wait(timeout=60)
        deadline = time.monotonic() + 30
        while any(_alive(c) for c in children) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(_alive(c) for c in children)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
