"""The multi-wave pages as a participant reads them: the changes page reminds them of the plan
they chose to follow, item by item (the answer still starting at "no change"), in their
language; and "page n of N" counts each round's own pages, starting again when they come back.
"""

from __future__ import annotations

import re
from datetime import timedelta
from html.parser import HTMLParser
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from recourse_engine import carloan_schema
from studyapp.models import Participant, Recourse, Study
from studyapp.participation import waves
from studyapp.studies import model_training, services, updates
from tests.studyapp.conftest import Walker, make_study, start

S = Participant.State
SCHEMA = carloan_schema()
STEP = re.compile(r'id="page-step">Page (\d+) of (\d+)<')


class _Fields(HTMLParser):
    """The changes form's selects (attributes, options' value -> selected) and the text of
    every element that has an id."""

    def __init__(self) -> None:
        super().__init__()
        self.selects: dict[str, dict[str, Any]] = {}
        self.text: dict[str, str] = {}
        self._select: dict[str, Any] | None = None
        self._open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "select":
            self._select = {"attrs": a, "options": {}}
            self.selects[str(a["name"])] = self._select
        elif tag == "option" and self._select is not None:
            self._select["options"][a.get("value")] = "selected" in a
        if a.get("id"):
            self.text.setdefault(str(a["id"]), "")
            self._open.append(str(a["id"]))
        elif self._open:
            self._open.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self._select = None
        if self._open and tag not in ("option", "input", "br"):
            self._open.pop()

    def handle_data(self, data: str) -> None:
        for name in self._open:
            if name:
                self.text[name] += data


def _step(body: str) -> tuple[int, int] | None:
    found = STEP.search(body)
    return (int(found.group(1)), int(found.group(2))) if found else None


def _round(w: Walker, first: dict[str, Any]) -> list[tuple[str, tuple[int, int] | None]]:
    """Walk one round from its first page (posting `first` there) to where it leaves the
    participant (away until the next round, or an end page): each page's key and step."""
    seen = []
    for _ in range(20):
        key = w.page()
        if key in ("", "wave_away"):
            break
        seen.append((key, _step(w.get().content.decode())))
        if key.startswith("evaluation-"):
            w.post(w.evaluation_data())
        elif key == seen[0][0]:
            w.post(first)
        else:
            w.post({"page": key})
    return seen


def _counted_in_order(seen: list[tuple[str, tuple[int, int] | None]]) -> bool:
    return [step for _key, step in seen] == [(n, len(seen)) for n in range(1, len(seen) + 1)]


@pytest.fixture
def two_waves(transactional_db: None, eager: None) -> Study:
    """A 2-wave study whose model is frozen (an unchanged profile is rejected again)."""
    study = make_study(slug="two-waves", state="draft")
    study = model_training.study_train_decision_model(
        study=study, kind="logistic", label_rule={"kind": "top_quantile", "share": 0.5}
    )
    waves_setting = {"count": 2, "schedule": [{"after_days": 7}]}
    study = updates.study_update(
        study=study, changes={"kind": "multi_wave", "waves": waves_setting}
    )
    services.study_set_state(study=study, state=Study.State.LIVE, acknowledged=["all"])
    return Study.objects.get(pk=study.pk)


def test_changes_page_reminds_of_the_plan_and_steps_count_per_round(two_waves: Study) -> None:
    w = start(Client(), two_waves)
    w.to_profile()
    w.submit_profile()
    assert w.participant.state == S.EVALUATING
    round_1: list[tuple[str, tuple[int, int] | None]] = []
    while w.page().startswith("evaluation-"):
        round_1.append((w.page(), _step(w.get().content.decode())))
        w.post(w.evaluation_data())
    plan = w.participant.recourses.order_by("position").first()
    assert isinstance(plan, Recourse) and plan.changed
    # round 1 ends with the plan to follow, its last step (the changes page is no step of it)
    assert w.page() == "wave_follow"
    follow_step = _step(w.get().content.decode())
    assert follow_step is not None and follow_step[0] == follow_step[1]
    assert round_1[-1][1] == (follow_step[0] - 1, follow_step[1])
    w.post({"page": "wave_follow", "followed": str(plan.pk)})
    waves.tick(now=timezone.now() + timedelta(days=8))
    assert w.page() == "wave_changes"

    body = w.get().content.decode()
    form = _Fields()
    form.feed(body)
    before = waves.current_wave(w.participant).values
    for item in SCHEMA.items:
        select = form.selects[f"item_{item.key}"]
        chosen = [value for value, selected in select["options"].items() if selected]
        assert chosen in ([], [""]), (item.key, chosen)  # "no change" stays the answer
        described = select["attrs"].get("aria-describedby") or ""
        reminder = form.text.get(f"id_item_{item.key}_helptext", "")
        if item.key in plan.changed:
            wanted = item.options[int(plan.values[item.key]) - 1]
            assert described == f"id_item_{item.key}_helptext", item.key
            assert reminder.strip() == f"Your plan: {wanted}", item.key
            assert f'for="id_item_{item.key}"' in body
        else:
            assert "Your plan" not in reminder and not described, item.key
        assert f"(now: {item.options[int(before[item.key]) - 1]})" in body
    assert body.count('class="plan-reminder"') == len(plan.changed)
    # in Japanese
    Participant.objects.filter(pk=w.participant.pk).update(language="ja")
    ja = w.get().content.decode()
    assert ja.count("あなたのプラン：") == len(plan.changed) and "変更なし" in ja
    assert "Your plan" not in ja and "No change" not in ja
    Participant.objects.filter(pk=w.participant.pk).update(language="en")

    # round 2 (the last): counted from the changes page again, no plan to follow after it
    round_2 = _round(w, {"page": "wave_changes", **{f"item_{k}": "" for k in SCHEMA.keys}})
    keys = [key for key, _step_ in round_2]
    assert keys[:2] == ["wave_changes", "decision"] and "wave_follow" not in keys
    assert [k for k in keys if k.startswith("evaluation-")], keys  # rejected again: new plans
    assert _counted_in_order(round_2), round_2
    assert w.participant.wave == 2
