"""Fixtures of the study service tests: a researcher who owns what they create."""

from __future__ import annotations

from typing import Any

import pytest

from tests.studyapp.console.conftest import researcher


@pytest.fixture
def owner(transactional_db: Any) -> Any:
    return researcher("owner")
