"""The console and the API check a study's settings with one model: the same invalid settings
posted through the console's change form (admin login) and through the API (token) are
refused with the same path-named message, and neither changes anything. What a live study
freezes is one list, obeyed by both."""

from __future__ import annotations

import html
import json
import re
from typing import Any

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from studyapp.models import Condition, Study
from studyapp.studies import carloan, services, updates
from tests.studyapp.console.conftest import change_data, change_url, client_for, researcher

BLUE = {"key": "blue", "prompt": "Choose Blue.", "options": ["Red", "Blue"], "answer": 2,
        "page": "profile"}  # fmt: skip


@pytest.fixture
def owner(transactional_db: Any) -> Any:
    return researcher("owner")


@pytest.fixture
def draft(owner: Any) -> Study:
    study = carloan.carloan_study_create(slug="loans", title="Loans", owner=owner, pool_size=60)
    Condition.objects.create(study=study, name="a", position=0)
    return study


def _api(user: Any) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def _snapshot(study: Study) -> tuple:
    row = Study.objects.filter(pk=study.pk).values().get()
    row.pop("updated_at")
    conditions = list(study.conditions.values_list("name", "design", "position"))
    quotas = list(study.quotas.values_list("condition__name", "screening_key", "limit"))
    return row, conditions, quotas


def _console_errors(page: str) -> list[str]:
    items = re.findall(r'<ul class="errorlist[^"]*"[^>]*>(.*?)</ul>', page, flags=re.S)
    return [html.unescape(li) for block in items for li in re.findall(r"<li>(.*?)</li>", block)]


CASES = [
    ("design", "sparsest:1,proxmate:1", "design[1]: unknown strategy 'proxmate'"),
    ("design", "lowest_cost@weighted[1,0.5,0,0]:1,random:0", "design[1]: k must be a positive"),
    ("conditions", [{"name": "a"}, {"name": "b", "design": "random:1,nope:2"}],
     "conditions[1].design[1]: unknown strategy 'nope'"),
    ("texts", {"ja": {"consnet": "同意しますか"}}, "texts.ja.consnet: unknown field"),
    ("attention_checks", [{**BLUE, "answer": 3}],
     "attention_checks[0].answer: 3 is not an option (1..2)"),
    ("outcome_codes", {"completed": {"code": "DONE", "redirect_url": "javascript:alert(1)"}},
     "outcome_codes.completed.redirect_url: 'javascript:alert(1)' is not an http(s) URL"),
    ("quotas", [{"condition": "gone", "limit": 5}], "quotas[0].condition: no condition named"),
    ("panel_param", "has space", "panel_param: 'has space': a URL parameter name"),
    ("attention_max_failures", 99, "attention_max_failures: Input should be less than"),
    ("retention", {"answers": {"days": -1}},
     "retention.answers.days: -1 days: a period is 0 to 36500 whole days"),
    ("retention", {"emails": {"days": 30}}, "retention.emails: unknown field; expected one of: "
     "participant, answers, free_text, paradata, panel_id, contact"),
    ("retention", {"answers": {"days": 30, "after": "finish"}},
     "retention.answers.after: 'finish' is not one of 'completion' or 'study_close'"),
]  # fmt: skip


@pytest.mark.parametrize(("setting", "value", "expected"), CASES)
def test_console_and_api_refuse_with_the_same_message(
    draft: Study, owner: Any, setting: str, value: Any, expected: str
) -> None:
    before = _snapshot(draft)

    posted = value if isinstance(value, str | int) else json.dumps(value)
    if setting == "outcome_codes":  # the console's editor sends every outcome
        posted = json.dumps({**draft.outcome_codes, **value})
    r = client_for(owner).post(change_url(draft), change_data(draft, **{setting: posted}))
    assert r.status_code == 200, r.status_code  # the form again, not a redirect
    console = [m for m in _console_errors(r.content.decode()) if m.startswith(expected)]

    r = _api(owner).patch(f"/api/studies/{draft.slug}/", {setting: value}, format="json")
    assert r.status_code == 400, r.content
    api = [m for m in r.json()[setting] if m.startswith(expected)]

    assert len(console) == 1 and console == api, (console, r.json())
    assert _snapshot(draft) == before


def test_a_valid_change_is_stored_the_same_either_way(draft: Study, owner: Any) -> None:
    change = {
        "design": "lowest_cost@weighted[1,0.5,0,0]:1,random:2",
        "attention_checks": [{**BLUE, "prompt": "  Choose Blue.  "}],
        "quotas": [{"condition": "a", "limit": 7}],
    }
    console_copy = services.study_create_from_schema(
        slug="copy", title="Copy", schema=draft.schema, owner=owner, pool_size=60,
        settings={"conditions": [{"name": "a"}]},
    )  # fmt: skip
    posted = {k: v if isinstance(v, str) else json.dumps(v) for k, v in change.items()}
    r = client_for(owner).post(change_url(console_copy), change_data(console_copy, **posted))
    assert r.status_code == 302, _console_errors(r.content.decode())
    r = _api(owner).patch(f"/api/studies/{draft.slug}/", change, format="json")
    assert r.status_code == 200, r.content
    via_console = updates.study_config(Study.objects.get(slug="copy"))
    via_api = updates.study_config(Study.objects.get(slug="loans"))
    for name in change:
        assert via_console[name] == via_api[name], name
    assert via_api["attention_checks"][0]["prompt"] == "Choose Blue."


def test_a_live_study_freezes_the_same_settings_everywhere(draft: Study, owner: Any) -> None:
    services.study_set_state(study=draft, state=Study.State.LIVE)
    page = client_for(owner).get(change_url(draft)).content.decode()
    current = updates.study_config(draft)
    api = _api(owner)
    for name in updates.DRAFT_ONLY:
        if name != "eligibility":  # shown as one checkbox field per question
            assert f'name="{name}"' not in page, name
        r = api.patch(f"/api/studies/{draft.slug}/", {name: current[name]}, format="json")
        assert r.status_code == 409 and name in r.json()["detail"], (name, r.content)
    assert 'name="eligible_occupation"' not in page
    for name in updates.ALWAYS:
        # a date and time come as two boxes (release_at_0, release_at_1)
        assert f'name="{name}"' in page or f'name="{name}_0"' in page, name
        r = api.patch(f"/api/studies/{draft.slug}/", {name: current[name]}, format="json")
        assert r.status_code == 200, (name, r.content)


def test_the_editor_assets_are_served_locally(draft: Study, owner: Any) -> None:
    client: Client = client_for(owner)
    page = client.get(change_url(draft)).content.decode()
    # texts, codes, checks, conditions, quotas, questions, their random order, page time-outs,
    # design-check thresholds, retention
    assert page.count("data-django-jsonform=") == 10
    assert "cdn." not in page and "unpkg.com" not in page
    assets = re.findall(r'(?:src|href)="(/static/django_jsonform/[^"]+)"', page)
    assert any(a.endswith("react-json-form.js") for a in assets), assets
    for url in assets:
        assert client.get(url).status_code == 200, url
