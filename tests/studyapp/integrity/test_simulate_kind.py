"""`simulate_participants --kind`: a bad kind, or a kind with the load run's options, is
refused with one clear message and walks nobody."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.management import CommandError, call_command

from studyapp.models import Participant
from tests.studyapp.conftest import make_study


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--kind", "robot"], "invalid choice: 'robot'"),
        (["--kind", "speeder", "--think", "1,2"], "--kind walks participants one after another"),
    ],
)
def test_a_bad_kind_is_refused(args: list[str], says: str, transactional_db: Any):
    make_study(slug="sim")
    with pytest.raises(CommandError, match=None) as info:
        call_command("simulate_participants", "sim", "--n", "1", *args)
    assert says in str(info.value)
    assert not Participant.objects.exists()
