"""The car-loan reference study is made by one function, whichever door it comes through:
the demo command, the console's "Add study" page and the API's create endpoint give the same
schema (with its Japanese labels), texts and design, and a Japanese study shows participants
the Japanese item labels (the console's study used to show "Residential prefecture")."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from recourse_engine import carloan_schema
from studyapp.models import Study
from studyapp.studies import carloan, services
from tests.studyapp.conftest import start
from tests.studyapp.console.conftest import client_for

JA_LABEL = carloan.SCHEMA_TRANSLATIONS["ja"]["items"]["residence_prefecture"]["label"]
EN_LABEL = carloan_schema().item("residence_prefecture").label


def _by_console(owner: Any) -> Study:
    r = client_for(owner).post(
        "/admin/studyapp/study/add/",
        {"slug": "ja-console", "title": "自動車ローン", "language": "ja",
         "schema_source": "builtin", "pool_size": "120", "seed": "0"},
    )  # fmt: skip
    assert r.status_code == 302, r.content.decode()[:2000]
    return Study.objects.get(slug="ja-console")


def _by_api(owner: Any) -> Study:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=owner).key}")
    r = client.post(
        "/api/studies/",
        {"slug": "ja-api", "title": "自動車ローン", "language": "ja", "pool_size": 120},
        format="json",
    )
    assert r.status_code == 201, r.content
    return Study.objects.get(slug="ja-api")


def _by_command(owner: Any) -> Study:
    call_command(
        "create_demo_study", "--slug", "ja-demo", "--language", "ja", "--pool-size", "120",
        "--no-admin", stdout=io.StringIO(),
    )  # fmt: skip
    return Study.objects.get(slug="ja-demo")


DOORS: dict[str, Callable[[Any], Study]] = {
    "console": _by_console,
    "api": _by_api,
    "command": _by_command,
}


@pytest.mark.parametrize("door", DOORS)
def test_japanese_carloan_study_shows_japanese_labels(
    door: str, owner: Any, settings: Any, tmp_path: Any
) -> None:
    settings.VAR_DIR = tmp_path
    study = DOORS[door](owner)
    assert study.language == "ja"
    assert study.schema == carloan.carloan_schema_dict()
    assert study.texts == {"en": carloan.TEXTS, "ja": carloan.TEXTS_JA}
    assert study.consent_version == carloan.CONSENT_VERSION
    assert study.design == "sparsest:1,proximate:1,random:3"
    if study.state == Study.State.DRAFT:
        services.study_set_state(study=study, state=Study.State.LIVE)
    walker = start(Client(), study)
    walker.to_profile()
    page = walker.get().content.decode()
    assert walker.page() == "profile"
    assert JA_LABEL in page and EN_LABEL not in page


def test_every_door_makes_the_same_study(owner: Any, settings: Any, tmp_path: Any) -> None:
    settings.VAR_DIR = tmp_path
    studies = [make(owner) for make in DOORS.values()]
    fields = ("schema", "schema_hash", "texts", "consent_version", "design", "language",
              "pool_hash", "pool_rows", "decision_model", "attention_checks")  # fmt: skip
    for field in fields:
        values = [getattr(s, field) for s in studies]
        assert values[0] == values[1] == values[2], field
