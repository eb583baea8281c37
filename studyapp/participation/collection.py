"""The profile page of a pool-collection study: the answers are stored and the participant
goes on (to the questionnaire after it, or completion), with no decision and no recourse.

The checks are those of any profile (`services.profile_codes`): every item answered with a
listed option, attention checks answered; a bad submission is refused and nothing is stored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import transaction

from studyapp.definition import engine_objects
from studyapp.models import Participant, Profile
from studyapp.participation import attention
from studyapp.participation.services import (
    _advance,
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
    then: str,
) -> Participant:
    """Store a pool-collection participant's profile, then go on to `then` (the next page,
    or the completed ending)."""
    schema = engine_objects.schema_of(participant.study.schema)
    profile_codes(schema, values)
    checks, answers = _attention_answers(participant.study, "profile", attention_answers)
    with transaction.atomic():
        p = _locked(participant, S.PROFILE, "profile")
        Profile.objects.create(
            participant=p, values={k: values[k] for k in schema.keys}, decision=""
        )
        _close_visit(p, "profile")
        if attention.record(p, checks, answers):
            _end(p, S.FAILED_ATTENTION)
        else:
            _advance(p, then)
        p.save()
    return p
