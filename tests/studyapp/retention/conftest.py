"""Fixtures of the retention tests: a live study with free-text and other items of its own,
and participants made row by row with every data class filled, ended at known times."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from studyapp.models import Evaluation, PageVisit, Participant, Profile, Recourse, Study
from studyapp.studies import services, updates
from tests.studyapp.conftest import SCHEMA, make_study

#: the clock the tests measure from: participants end at T0 + some days
T0 = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
QUESTIONS = [
    {"key": "comments", "page": "post", "type": "text", "text": {"en": "Any comments?"},
     "required": False},
    {"key": "trust", "page": "post", "type": "likert", "text": {"en": "Trust?"}, "points": 5},
    {"key": "more", "page": "evaluation", "type": "text", "text": {"en": "Anything else?"},
     "required": False},
]  # fmt: skip
VISITED = ("consent", "screening", "profile")


def day(n: float) -> datetime:
    return T0 + timedelta(days=n)


@pytest.fixture
def study(db: Any) -> Study:
    """Live, with its own items (a free-text one on the questionnaire and on each plan)."""
    draft = make_study(slug="kept", state="draft")
    updates.study_update(study=draft, changes={"questions": QUESTIONS})
    return services.study_set_state(study=draft, state=Study.State.LIVE)


def set_rules(study: Study, rules: dict[str, Any]) -> Study:
    return updates.study_update(study=study, changes={"retention": rules})


def person(study: Study, n: int, ended: datetime | None, **fields: Any) -> Participant:
    """A participant with every data class: contact address, panel id and parameters,
    screening, questionnaire (free text and a rating), device, a profile, two rated plans
    with why-answers, a free-text plan item and their seconds, three page visits."""
    fields.setdefault("state", Participant.State.COMPLETED if ended else "evaluating")
    p = Participant.objects.create(
        study=study,
        finished_at=ended,
        recruitment_id=f"PANEL{n}",
        panel={"STUDY_ID": "s1"},
        contact_email=f"p{n}@example.org",
        screening={"gender": "1", "occupation": "1"},
        age=30 + n,
        gender="1",
        income_band="3M-4M",
        income_jpy=3_500_000.0,
        attention={"blue": 2},
        answers={"comments": f"thoughts of {n}", "trust": 4},
        item_orders={"post": ["comments", "trust"]},
        device_class="phone",
        viewport_width=390,
        viewport_height=844,
        consent_version=study.consent_version,
        consented_at=T0,
        **fields,
    )
    Profile.objects.create(participant=p, values={it.key: 1 for it in SCHEMA.items})
    for position in (1, 2):
        r = Recourse.objects.create(
            participant=p, position=position, strategy="random",
            values={it.key: 2 for it in SCHEMA.items}, changed=["education"], sparsity=1,
            proximity=0.25,
        )  # fmt: skip
        Evaluation.objects.create(
            recourse=r, participant=p, acceptance=5, action=3, acceptance_why="fair",
            action_why="hard", answers={"more": "no"}, seconds_on_page=12.5,
        )  # fmt: skip
    for page in VISITED:
        PageVisit.objects.create(participant=p, page=page, entered_at=T0, exited_at=T0)
    return p
