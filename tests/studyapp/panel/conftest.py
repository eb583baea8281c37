"""The fake Prolific service as a real server process on 127.0.0.1 (a free port it picks and
prints), one per test module, emptied before each test; and a Fernet key for the tokens."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from cryptography.fernet import Fernet

FAKE = Path(__file__).with_name("fake_prolific.py")
TOKEN = "fakeToken_0123456789abcdefABCDEF"


class FakeProlific:
    """The running fake: its address and its control routes."""

    def __init__(self, url: str) -> None:
        self.url = url

    def ctl(self, name: str, body: dict[str, Any] | None = None) -> Any:
        r = requests.post(f"{self.url}/__fake__/{name}", json=body or {}, timeout=10)
        r.raise_for_status()
        return r.json()

    def study(self, **body: Any) -> str:
        return self.ctl("studies", body)["id"]

    def start(self, study_id: str, participant_id: str) -> str:
        return self.ctl("start", {"study_id": study_id, "participant_id": participant_id})["id"]

    def complete(self, submission_id: str, code: str) -> dict[str, Any]:
        return self.ctl("complete", {"submission_id": submission_id, "code": code})

    def set_status(self, submission_id: str, status: str) -> None:
        self.ctl("status", {"submission_id": submission_id, "status": status})

    def faults(self, route: str, *faults: dict[str, Any]) -> None:
        self.ctl("faults", {"route": route, "faults": list(faults)})

    def counts(self) -> dict[str, Any]:
        return self.ctl("counts")

    def submissions(self) -> dict[str, dict[str, Any]]:
        return {s["id"]: s for s in self.ctl("submissions")}


@pytest.fixture(scope="module")
def fake_server() -> Iterator[FakeProlific]:
    proc = subprocess.Popen(
        [sys.executable, str(FAKE), "--token", TOKEN], stdout=subprocess.PIPE, text=True
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        if not line.startswith("port "):
            raise RuntimeError(f"the fake Prolific did not start: {line!r}")
        yield FakeProlific(f"http://127.0.0.1:{int(line.split()[1])}")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def fake(fake_server: FakeProlific) -> FakeProlific:
    fake_server.ctl("reset")
    return fake_server


@pytest.fixture(autouse=True)
def panel_key(settings: Any) -> str:
    settings.STUDYAPP_PANEL_KEY = Fernet.generate_key().decode()
    return settings.STUDYAPP_PANEL_KEY
