"""A finished study with answers to code, its codebook, and researchers: two coders, a
principal investigator who resolves, and one without any coding permission."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client

from studyapp.coding import services
from studyapp.models import Evaluation, Study
from tests.studyapp.conftest import make_study
from tests.studyapp.console.factory import populate

PASSWORD = "a-long-password-1"
CODER_PERMS = ("view_code", "view_coding", "add_coding")
PI_PERMS = (*CODER_PERMS, "add_code", "add_coderassignment", "add_finalcode", "view_finalcode")
ANSWERS = [
    "the cost of a new degree is too high", "I could move house for this", "too much effort",
    "cheap and quick", "my family would not agree", "it takes years of study",
    "a small change, easy", "the salary change is unrealistic", "I already plan this",
    "no time for that", "fine", "would cost me my job",
]  # fmt: skip


def researcher(name: str, perms: tuple[str, ...], study: Study | None = None) -> Any:
    user = get_user_model().objects.create_user(name, "", PASSWORD, is_staff=True)
    user.user_permissions.set(
        Permission.objects.filter(content_type__app_label="studyapp_coding", codename__in=perms)
    )
    if study is not None:
        study.shared_with.add(user)
    return get_user_model().objects.get(pk=user.pk)  # fresh permission cache


def client_of(user: Any) -> Client:
    c = Client()
    c.force_login(user)
    return c


@pytest.fixture
def coded_study(transactional_db: Any) -> Study:
    """12 answers (acceptance_why) of 3 participants x 4 recourses; action_why empty."""
    study = make_study()
    populate(study, 3, k=4, panel=False)
    for ev, text in zip(Evaluation.objects.order_by("pk"), ANSWERS, strict=True):
        ev.acceptance_why = text
        ev.save(update_fields=["acceptance_why"])
    return study


@pytest.fixture
def people(coded_study: Study) -> dict[str, Any]:
    pi = researcher("pi", PI_PERMS, coded_study)
    a = researcher("coder_a", CODER_PERMS, coded_study)
    b = researcher("coder_b", CODER_PERMS, coded_study)
    services.codes_add(
        study=coded_study,
        rows=[
            {"code": "cost", "definition": "money or effort it costs", "example": "too dear"},
            {"code": "effort", "definition": "time or work", "example": "years of study"},
        ],
        by=pi,
    )
    for coder in (a, b):
        services.coder_assign(study=coded_study, coder=coder, by=pi)
    return {"pi": pi, "a": a, "b": b}


def evaluations(study: Study) -> list[Evaluation]:
    return list(Evaluation.objects.filter(participant__study=study).order_by("pk"))
