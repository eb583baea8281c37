"""Fixtures of the browser tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def downloads(tmp_path: Path) -> Path:
    """Where Chromium saves what a test downloads (`chromium.start_downloading_chromium`)."""
    folder = tmp_path / "downloads"
    folder.mkdir()
    return folder
