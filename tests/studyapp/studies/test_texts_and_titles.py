"""Texts that agree with the design: placeholders filled from the participant's design, an
unknown one refused by its path with nothing changed, warnings where a text still promises the
reference design; and a participant-facing title that keeps the internal one from them."""

from __future__ import annotations

from typing import Any

import pytest
from django.core import mail
from django.test import Client

from studyapp.definition.errors import ConfigError
from studyapp.models import Participant, Study
from studyapp.participation import release
from studyapp.studies import carloan, services, text_checks, updates
from tests.studyapp.conftest import make_study, start

INTERNAL = "Internal: Wachter vs EBR vs pool"


@pytest.fixture
def draft(transactional_db: Any) -> Study:
    study = make_study(slug="texts", state="draft")
    return updates.study_update(study=study, changes={"title": INTERNAL})


def _row(study: Study) -> dict[str, Any]:
    return Study.objects.values().get(pk=study.pk)


def test_an_unknown_placeholder_is_refused_by_its_path_and_nothing_changes(draft: Study) -> None:
    before = _row(draft)
    texts = {"en": {**carloan.TEXTS, "consent": "You will rate {n_plan} plans."}}
    with pytest.raises(ConfigError) as caught:
        updates.study_update(study=draft, changes={"texts": texts})
    assert caught.value.problems == [
        ("texts.en.consent", "unknown placeholder {n_plan} (this text may use: {n_plans})")
    ]
    # {position} belongs to the plan's own text only
    texts = {"ja": {"welcome": "プラン {position}"}}
    with pytest.raises(ConfigError, match=r"texts\.ja\.welcome: unknown placeholder \{position\}"):
        updates.study_update(study=draft, changes={"texts": texts})
    assert _row(draft) == before


def test_n_plans_is_filled_from_the_participants_design(draft: Study, eager: None) -> None:
    texts = {"en": {**carloan.TEXTS, "consent": "You will rate {n_plans} action plans."}}
    study = updates.study_update(
        study=draft,
        changes={
            "texts": texts,
            "conditions": [{"name": "two", "design": "proximate:1,random:1"}],
        },
    )
    services.study_set_state(study=study, state=Study.State.LIVE)
    walker = start(Client(), study)
    assert walker.participant.condition == "two"
    page = walker.get().content.decode()
    assert "You will rate 2 action plans." in page and "{n_plans}" not in page
    # the study's own design where the participant has no condition of their own
    assert Study.objects.get(pk=study.pk).texts_for()["consent"] == "You will rate 5 action plans."


def test_texts_that_promise_the_reference_design_are_warned_of(draft: Study) -> None:
    assert text_checks.text_warnings(draft) == []  # the reference design: its texts are true
    study = updates.study_update(study=draft, changes={"design": "random:1,proximate:1,gs:1"})
    warnings = text_checks.text_warnings(study)
    assert any(
        w.startswith("texts.en.plan_intro: still the reference study's text") for w in warnings
    )
    assert "texts.en.consent: names 5 plans, but the design shows 3 (write {n_plans} to have " \
        "the number filled in)" in warnings  # fmt: skip
    texts = {"en": {**carloan.TEXTS, "consent": "You will rate {n_plans} action plans.",
                    "plan_intro": "Plan {position} of {total}.",
                    "waiting": "Preparing your plans."}}  # fmt: skip
    study = updates.study_update(study=study, changes={"texts": texts})
    assert text_checks.text_warnings(study) == []
    # the console says so when the study is saved
    everything = text_checks.study_warnings(study)
    assert any("gs, which need a decision model" in w for w in everything)


def test_the_internal_title_never_reaches_participants(draft: Study, eager: None) -> None:
    texts = {**draft.texts, "en": {**draft.texts["en"], "title": "Loan advice study"}}
    study = updates.study_update(
        study=draft,
        changes={"texts": texts, "release_mode": "delayed", "release_after_days": 1,
                 "time_zone": "Asia/Tokyo"},
    )  # fmt: skip
    services.study_set_state(study=study, state=Study.State.LIVE)
    client = Client()
    welcome = client.get(f"/s/{study.slug}/").content.decode()
    assert "<title>Loan advice study</title>" in welcome and INTERNAL not in welcome
    walker = start(client, study)
    walker.to_profile()
    walker.submit_profile()
    for _ in range(2):
        assert INTERNAL not in walker.get().content.decode()
    walker.post({"page": "under_review", "email": "p@example.org"})
    assert mail.outbox[-1].subject == "Loan advice study: Your application is under review"
    assert INTERNAL not in mail.outbox[-1].body
    # without a participant-facing title, the subject carries none (never the internal one)
    assert release.mail_subject(Participant(study=Study(title=INTERNAL, texts={})), "Hi") == "Hi"
