"""Fixtures of the researcher console tests: researchers, a pool file, a finished study, the
change form as a browser posts it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client

from recourse_engine import synth_pool
from studyapp.models import Participant, Study
from studyapp.studies import updates
from tests.studyapp.conftest import SCHEMA, make_study, start

PASSWORD = "a-long-password-1"


def pool_bytes(n: int = 300, seed: int = 3) -> bytes:
    return synth_pool(SCHEMA, n=n, seed=seed).to_csv(index=False).encode()


def researcher(username: str, *, superuser: bool = False) -> Any:
    """A staff account with the study app's model permissions (what a lab admin grants)."""
    User = get_user_model()
    if superuser:
        return User.objects.create_superuser(username, "", PASSWORD)
    user = User.objects.create_user(username, "", PASSWORD, is_staff=True)
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="studyapp"))
    return user


def client_for(user: Any) -> Client:
    c = Client()
    assert c.login(username=user.username, password=PASSWORD)
    return c


def complete(study: Any, n: int = 2, *, panel_prefix: str = "") -> list[Any]:
    """n participants walk the real pages to the end (tasks run eagerly)."""
    walkers = []
    for i in range(n):
        query = f"?PROLIFIC_PID={panel_prefix}{i}" if panel_prefix else ""
        w = start(Client(), study, query)
        w.to_profile()
        w.submit_profile()
        while w.participant.state == Participant.State.EVALUATING:
            w.post(w.evaluation_data(action_why=f"because {i}"))
        walkers.append(w)
    return walkers


def change_data(study: Study, **overrides: Any) -> dict[str, Any]:
    """The draft change form as the browser posts it."""
    data: dict[str, Any] = {
        "title": study.title,
        "language": study.language,
        "texts": json.dumps(study.texts),
        "consent_version": study.consent_version,
        "design": study.design,
        "seed": str(study.seed),
        "decision_model": study.decision_model,
        "method_params": json.dumps(study.method_params),
        "method_fallback": study.method_fallback,
        "outcome_codes": json.dumps(study.outcome_codes),
        "panel_param": study.panel_param,
        "assignment_timeout_minutes": str(study.assignment_timeout_minutes),
        "attention_checks": json.dumps(study.attention_checks),
        "attention_max_failures": str(study.attention_max_failures),
        "attention_rule": study.attention_rule,
        "page_order": study.page_order,
        "assignment": study.assignment,
        "waiting_timeout_s": str(study.waiting_timeout_s),
        "questions": json.dumps(study.questions),
        "random_item_order": json.dumps(study.random_item_order),
        "page_timeouts": json.dumps(study.page_timeouts),
        # the decision page: a worded choice and whole seconds
        "approved_branch": study.approved_branch,
        "page_min_seconds": str((study.page_min_seconds or {}).get("decision", 0)),
        "shared_with": [u.pk for u in study.shared_with.all()],
        # study kind and delayed release (the admin splits a date-time into two inputs)
        "kind": study.kind,
        "release_mode": study.release_mode,
        "release_at_0": study.release_at.strftime("%Y-%m-%d") if study.release_at else "",
        "release_at_1": study.release_at.strftime("%H:%M:%S") if study.release_at else "",
        "release_after_days": "" if study.release_after_days is None else study.release_after_days,
        "reminder_every_days": str(study.reminder_every_days),
        "max_reminders": str(study.max_reminders),
        "return_deadline_days": str(study.return_deadline_days),
        "time_zone": study.time_zone,
        "retention": json.dumps(study.retention),
    }
    for q in study.schema.get("screening", []):
        codes = q.get("eligible") or q.get("eligible_only") or []
        if q["type"] != "integer":
            data[f"eligible_{q['key']}"] = [str(c) for c in codes]
    current = updates.study_config(study)
    data["conditions"] = json.dumps(current["conditions"])
    data["quotas"] = json.dumps(current["quotas"])
    data.update(overrides)
    return data


def change_url(study: Study) -> str:
    return f"/admin/studyapp/study/{study.pk}/change/"


@pytest.fixture
def owner(transactional_db: Any) -> Any:
    return researcher("owner")


@pytest.fixture
def owner_client(owner: Any) -> Client:
    return client_for(owner)


@pytest.fixture
def draft(owner: Any) -> Study:
    """A draft study of the owner's (a test module may define its own `draft`)."""
    study = make_study(slug="draft", state="draft")
    study.owner = owner
    study.save()
    return study
