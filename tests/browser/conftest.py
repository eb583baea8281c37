"""Fixtures of the browser tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.chromium import start_chromium


@pytest.fixture
def downloads(tmp_path: Path) -> Path:
    """Where Chromium saves what a test downloads (`chromium.start_downloading_chromium`)."""
    folder = tmp_path / "downloads"
    folder.mkdir()
    return folder


@pytest.fixture
def driver() -> Iterator[object]:
    """Chromium at a phone's width; a module that needs another size or downloads declares
    its own `driver`."""
    d = start_chromium("412,915")
    yield d
    d.quit()
