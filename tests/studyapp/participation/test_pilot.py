"""A pilot shows what participants will see: bots and previews are placed by the study's own
assignment rule (among the test participants), a preview link may choose the condition and
skip a delayed study's delay, and a draft whose methods were fitted shows a method's own
plan."""

from __future__ import annotations

import html
from collections import Counter
from typing import Any

import pytest
from django.test import Client

from studyapp.generation import method_fitting
from studyapp.models import Participant, Study
from studyapp.participation import preview
from studyapp.simulation.bots import Bot
from studyapp.studies import comparison, updates
from tests.studyapp.conftest import SCHEMA, make_study, start

S = Participant.State
CONDITIONS = [{"name": "a", "design": "sparsest:1"}, {"name": "b", "design": "random:1"}]
LOW = {it.key: "1" for it in SCHEMA.items}


def _two_conditions(rule: str, slug: str = "pilot") -> Study:
    study = make_study(slug=slug, state="draft")
    return updates.study_update(study=study, changes={"conditions": CONDITIONS, "assignment": rule})


@pytest.mark.slow
@pytest.mark.parametrize("rule", ["least_filled", "block_random"])
def test_a_60_bot_pilot_splits_as_the_rule_says(
    rule: str, transactional_db: Any, eager: None
) -> None:
    study = _two_conditions(rule)
    for seed in range(60):
        result = Bot(study, seed=seed).run()
        # a rich bot may have no admissible recourse in the pool: it still took part
        assert result.outcome in ("completed", "no_recourse"), result
    bots = Participant.objects.filter(study=study, is_test=True).order_by("pk")
    split = Counter(bots.values_list("condition", flat=True))
    # both rules are balanced over every 2 arrivals: exactly half each
    assert split == {"a": 30, "b": 30}
    if rule == "block_random":
        conditions = list(bots.values_list("condition", flat=True))
        assert all({*conditions[i : i + 2]} == {"a", "b"} for i in range(0, 60, 2))
        assert bots.first().assignment == "block_random:0"
    # the pilot shifts no real participant: the first real one is assigned as if alone
    study.state = Study.State.LIVE
    study.save(update_fields=["state"])
    real = start(Client(), study).participant
    assert not real.is_test
    expected = "a" if rule == "least_filled" else _first_block_condition(study)
    assert real.condition == expected


def _first_block_condition(study: Study) -> str:
    from studyapp.participation.assignment import block_condition

    return block_condition(["a", "b"], int(study.seed), 0)[0]


def test_previews_alternate_and_a_link_may_choose_the_condition(
    transactional_db: Any, eager: None
) -> None:
    study = _two_conditions("least_filled")
    plain = [start(Client(), study, f"?preview={preview.preview_token(study)}") for _ in range(4)]
    assert [w.participant.condition for w in plain] == ["a", "b", "a", "b"]
    chosen = start(Client(), study, f"?preview={preview.preview_token(study, condition='b')}")
    assert chosen.participant.condition == "b" and chosen.participant.is_test
    links = preview.preview_links(study)
    assert [row["condition"] for row in links] == ["", "a", "b"]


def test_a_preview_link_for_a_removed_condition_says_so(transactional_db: Any) -> None:
    study = _two_conditions("least_filled")
    token = preview.preview_token(study, condition="gone")
    r = Client().get(f"/s/{study.slug}/?preview={token}")
    assert r.status_code == 400
    assert "condition 'gone', which the study no longer has" in html.unescape(r.content.decode())
    assert not Participant.objects.exists()


def test_a_delayed_studys_preview_can_skip_the_delay(transactional_db: Any, eager: None) -> None:
    study = make_study(slug="later", state="draft")
    updates.study_update(study=study, changes={"release_mode": "delayed", "release_after_days": 14})
    held = start(Client(), study, f"?preview={preview.preview_token(study)}")
    held.to_profile()
    assert held.submit_profile().status_code == 302
    assert held.page() == "under_review"  # an ordinary preview sees the delay
    token = preview.preview_token(study, skip_delay=True)
    skip = start(Client(), study, f"?preview={token}")
    skip.to_profile()
    assert skip.submit_profile().status_code == 302
    p = skip.participant
    assert p.preview_skip_delay and p.released_at is not None
    assert skip.page() == "report"  # the second session, at once
    assert skip.post({"page": "report"}).status_code == 302
    assert skip.page() == "evaluation-1"
    # a real participant's link carries no token: never released early
    assert not Participant.objects.filter(is_test=False, preview_skip_delay=True).exists()


def test_a_draft_preview_shows_wachters_own_plan(transactional_db: Any, eager: None) -> None:
    study = comparison.comparison_study_create(slug="draft-w", design="proximate:1", pool_size=400)
    study = updates.study_update(study=study, changes={"design": "proximate:1,wachter:1"})
    assert study.state == Study.State.DRAFT
    method_fitting.fits_for_draft(study=study)  # eager: fitted at commit
    assert study.fitted_methods.get(strategy="method:wachter").state == "done"
    walker = start(Client(), study, f"?preview={preview.preview_token(study)}")
    walker.to_profile()
    assert walker.submit_profile(LOW).status_code == 302
    p = walker.participant
    assert p.is_test and p.state == S.EVALUATING
    own = p.recourses.get(method="wachter")
    assert own.origin == "generated" and own.fallback == "" and own.fit_version
    seen = set()
    for _ in range(p.recourses.count()):
        body = walker.get().content.decode()
        seen.add(int(body.split('name="recourse" value="', 1)[1].split('"', 1)[0]))
        assert walker.post(walker.evaluation_data()).status_code == 302
    assert own.pk in seen  # the participant page showed Wachter's own plan
