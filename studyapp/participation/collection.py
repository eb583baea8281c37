"""The profile page of a pool-collection study: the answers are stored and the participant
goes on (to the questionnaire after it, or completion), with no decision and no recourse.

The checks are those of any profile (`services.profile_codes`): every item answered with a
listed option, attention checks answered; a bad submission is refused and nothing is stored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import transaction

from studyapp.generation import engine
from studyapp.models import Participant, Profile
from studyapp.participation import attention, flow
from studyapp.participation.services import (
    _attention_answers,
    _close_visit,
    _end,
    _locked,
    profile_codes,
)

S = Participant.State


def collected_profile_submit(
    *,
    participant: Participant,
    values: Mapping[str, int | float],
    attention_answers: Mapping[str, Any] | None = None,
) -> Participant:
    """Store a pool-collection participant's profile, then the next page or completion."""
    schema = engine.schema_of(participant.study.schema)
    profile_codes(schema, values)
    checks, answers = _attention_answers(participant.study, "profile", attention_answers)
    with transaction.atomic():
        p = _locked(participant, S.PROFILE, "profile")
        Profile.objects.create(
            participant=p, values={k: values[k] for k in schema.keys}, decision=""
        )
        _close_visit(p, "profile")
        then = flow.after(p.study, S.PROFILE)
        if attention.record(p, checks, answers):
            _end(p, S.FAILED_ATTENTION)
        elif then == S.COMPLETED:
            _end(p, S.COMPLETED)
        else:
            p.state = then
        p.save()
    return p
