"""A study with the integrity signals on, and a clock the bots advance as they think (the
server measures time on a page with `timezone.now`, which the clock stands in for)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any
from unittest import mock

import pytest
from django.utils import timezone

from studyapp.models import Study
from studyapp.studies import services
from tests.studyapp.conftest import make_study


class Clock:
    """The server's time, moved on only by `advance` (a bot's thinking)."""

    def __init__(self) -> None:
        self.at = timezone.now()

    def now(self) -> datetime:
        return self.at

    def advance(self, seconds: float) -> None:
        self.at += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> Iterator[Clock]:
    c = Clock()
    with mock.patch("django.utils.timezone.now", c.now):
        yield c


def integrity_study(slug: str = "integrity", *, on: bool = True, **create: Any) -> Study:
    """The car-loan study, the signals switched on (or off) while a draft, then live."""
    study = make_study(slug=slug, state="draft", **create)
    Study.objects.filter(pk=study.pk).update(integrity_signals=on)
    study.refresh_from_db()
    services.study_set_state(study=study, state=Study.State.LIVE)
    study.refresh_from_db()
    return study
