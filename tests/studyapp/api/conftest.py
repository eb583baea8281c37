"""The API's cast: an owner, a researcher the study is shared with, another researcher, a
non-staff account, a superuser and an anonymous caller; a car-loan study on a small pool
with participants and evaluations written straight into the tables (the API only reads
them, and the participant flow has its own tests)."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from recourse_engine import carloan_schema, synth_pool
from studyapp.models import Evaluation, Participant, Profile, Recourse, Study
from studyapp.studies import study_setup

PASSWORD = "correct horse battery 7"
ROLES = ("anonymous", "plain", "other", "shared", "owner", "superuser")
#: staff accounts with these study-app permissions (codename prefixes; "full" is all four)
PERM_SETS = {
    "none": (),
    "view": ("view_",),
    "change": ("change_",),
    "full": ("view_", "change_", "add_", "delete_"),
}
SCHEMA = carloan_schema()
#: PBKDF2 at production strength costs seconds per account on this machine
FAST_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def pool_csv(n: int = 40, seed: int = 3) -> bytes:
    buf = io.StringIO()
    synth_pool(SCHEMA, n=n, seed=seed).to_csv(buf, index=False)
    return buf.getvalue().encode()


@dataclass
class Cast:
    users: dict[str, Any]
    study: Study

    def client(self, role: str) -> APIClient:
        """A client authenticated with the role's token (no header when anonymous)."""
        client = APIClient()
        user = self.users.get(role)
        if user is not None:
            token, _ = Token.objects.get_or_create(user=user)
            client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        return client


def add_participant(
    study: Study,
    *,
    state: str = Participant.State.COMPLETED,
    condition: str = "",
    evaluations: int = 2,
    recruitment_id: str = "",
    flagged: bool = False,
    created_ago: timedelta = timedelta(0),
    why: str = "because",
) -> Participant:
    """A participant row with a profile and `evaluations` rated recourses."""
    now = timezone.now()
    p = Participant.objects.create(
        study=study,
        state=state,
        condition=condition,
        recruitment_id=recruitment_id,
        panel={"STUDY_ID": "panel-study"} if recruitment_id else {},
        gender="1",
        age=30,
        income_jpy=3_500_000.0,
        flagged=flagged,
        flag_reason="test flag" if flagged else "",
        generation=Participant.Generation.DONE if evaluations else Participant.Generation.NONE,
        generation_queued_at=now if evaluations else None,
        generation_finished_at=now + timedelta(seconds=1.5) if evaluations else None,
        finished_at=now + timedelta(minutes=10) if state == Participant.State.COMPLETED else None,
    )
    if created_ago:
        Participant.objects.filter(pk=p.pk).update(created_at=now - created_ago)
        p.refresh_from_db()
    values = {it.key: 1 for it in SCHEMA.items}
    Profile.objects.create(participant=p, values=values, decision="rejected")
    strategies = ["sparsest", "proximate", "random", "random", "random"]
    for i in range(evaluations):
        cf = dict(values, **{SCHEMA.keys[0]: 2})
        r = Recourse.objects.create(
            participant=p,
            position=i + 1,
            strategy=strategies[i % 5],
            pool_index=i,
            pool_id=f"P{i}",
            values=cf,
            changed=[SCHEMA.keys[0]],
            sparsity=1,
            proximity=0.25,
        )
        Evaluation.objects.create(
            recourse=r,
            participant=p,
            acceptance=5,
            acceptance_why=why,
            impossible=[],
            action=3,
            action_why=why,
            seconds_on_page=12.5,
        )
    return p


def researcher(username: str, perm_set: str = "full") -> Any:
    """A staff account with the study app's model permissions of `perm_set` (what a lab's
    admin grants a researcher: "full")."""
    user = get_user_model().objects.create_user(username, password=PASSWORD, is_staff=True)
    prefixes = PERM_SETS[perm_set]
    granted = [
        p
        for p in Permission.objects.filter(content_type__app_label="studyapp")
        if p.codename.startswith(prefixes)
    ]
    user.user_permissions.set(granted)
    return user


def make_cast(*, participants: bool = True) -> Cast:
    User = get_user_model()
    users: dict[str, Any] = {"anonymous": None}
    users["plain"] = User.objects.create_user("plain", password=PASSWORD)
    for role in ("other", "shared", "owner"):
        users[role] = researcher(role)
    for perm_set in PERM_SETS:
        users[f"perm_{perm_set}"] = researcher(f"perm_{perm_set}", perm_set)
    users["superuser"] = User.objects.create_superuser("boss", password=PASSWORD)
    study = study_setup.study_create_from_schema(
        slug="loans", title="Car loan", schema=None, owner=users["owner"], pool=pool_csv()
    )
    study.shared_with.add(users["shared"])
    study_setup.study_create_from_schema(
        slug="elsewhere", title="Other's", schema=None, owner=users["other"], pool=pool_csv()
    )
    if participants:
        add_participant(study, recruitment_id="PID-1")
        add_participant(study, state=Participant.State.EVALUATING, evaluations=1)
    return Cast(users=users, study=study)


@pytest.fixture(autouse=True)
def _fast_passwords(settings: Any) -> None:
    """PBKDF2 at production strength costs seconds per account on this machine."""
    settings.PASSWORD_HASHERS = FAST_HASHERS


@pytest.fixture(autouse=True)
def _fresh_throttles() -> Any:
    """The token endpoint's throttle counts live in the cache: each test starts afresh."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def cast(db: Any) -> Cast:
    return make_cast()


@pytest.fixture(scope="module")
def module_cast_ids(django_db_setup: Any, django_db_blocker: Any) -> Iterator[dict[str, Any]]:
    """The cast made once for a module, inside a transaction that is rolled back when the
    module ends; each test (`db`) runs in a savepoint of it and rolls back to it, as Django's
    `TestCase.setUpTestData` does. For modules of many tests on one unchanged cast: making it
    costs more than most of their requests."""
    from django.db import transaction
    from django.test.utils import override_settings

    with django_db_blocker.unblock(), override_settings(PASSWORD_HASHERS=FAST_HASHERS):
        outer = transaction.atomic()
        outer.__enter__()
        try:
            made = make_cast()
            yield {
                "users": {role: user and user.pk for role, user in made.users.items()},
                "study": made.study.pk,
            }
        finally:
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)


@pytest.fixture
def module_cast(db: Any, module_cast_ids: dict[str, Any]) -> Cast:
    """`module_cast_ids`' cast read back afresh for each test (a test that changed an object
    in memory leaves the next one the rows as they are)."""
    User = get_user_model()
    users = {role: pk and User.objects.get(pk=pk) for role, pk in module_cast_ids["users"].items()}
    return Cast(users=users, study=Study.objects.get(pk=module_cast_ids["study"]))


@pytest.fixture
def as_role(cast: Cast) -> Callable[[str], APIClient]:
    return cast.client
