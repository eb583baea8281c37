"""Fixtures for the study app: a live car-loan study on a small synthetic pool, and a
participant client that walks the real pages."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from recourse_engine import carloan_schema, synth_pool
from studyapp.config.celery_app import app as celery_app
from studyapp.generation import worker_cache
from studyapp.models import Participant, Study
from studyapp.participation import study_cache
from studyapp.studies import carloan, services

# Unit tests never reach a real broker: a task that is not run eagerly stays in memory.
celery_app.conf.broker_url = "memory://"
celery_app.conf.broker_transport = None

SCHEMA = carloan_schema()
DESIGN = "sparsest:1,proximate:1,random:3"

#: eligible screening answers of the car-loan study (codes as the form posts them)
ELIGIBLE = {
    "age": "34",
    "gender": "1",
    "occupation": "1",
    "income": "3",  # 3M-4M -> 3,500,000 JPY
    "car_purchase": "2",
    "loans": ["8"],
}
#: a modest profile: lowest option everywhere, so many pool profiles are improvements
PROFILE = {it.key: "1" for it in SCHEMA.items}


@pytest.fixture(autouse=True)
def _fresh_engine_cache() -> Iterator[None]:
    worker_cache.clear_cache()
    study_cache.forget()  # tables are emptied between tests, so ids come round again
    yield
    worker_cache.clear_cache()


@pytest.fixture
def eager() -> Iterator[None]:
    """Run queued tasks in-process at commit time (the integration tests use a real worker)."""
    old = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = old


def make_study(
    slug: str = "carloan", pool: Any = None, state: str = "live", **create: Any
) -> Study:
    """The car-loan study on `pool` (default: 600 synthetic profiles), live unless `state`
    says draft; `create`: further arguments of `services.study_create` (title, design, seed,
    owner, ...) over this study's."""
    frame = synth_pool(SCHEMA, n=600, seed=1) if pool is None else pool
    study = services.study_create(
        slug=slug,
        schema=SCHEMA,
        pool=frame,
        texts=carloan.TEXTS,
        consent_version=carloan.CONSENT_VERSION,
        **{"title": "Car loan (test)", "design": DESIGN, "seed": 7, **create},
    )
    if state == "live":
        services.study_set_state(study=study, state=Study.State.LIVE)
    return study


@pytest.fixture
def study(transactional_db: Any) -> Study:
    return make_study()


class Walker:
    """A participant's browser: GET shows the current page, POST answers it."""

    def __init__(self, client: Client, url: str) -> None:
        self.client = client
        self.url = url

    @property
    def participant(self) -> Participant:
        return Participant.objects.get(code=self.url.rstrip("/").rsplit("/", 1)[-1])

    def get(self) -> Any:
        return self.client.get(self.url)

    def post(self, data: dict[str, Any], follow: bool = False) -> Any:
        return self.client.post(self.url, data, follow=follow)

    def page(self) -> str:
        body = self.get().content.decode()
        marker = 'name="page" value="'
        if marker not in body:
            return ""
        return body.split(marker, 1)[1].split('"', 1)[0]

    def consent(self) -> Any:
        self.get()
        return self.post({"page": "consent", "agree": "on"})

    def screening(self, answers: dict[str, Any] | None = None) -> Any:
        """Answer the screening (agreeing first when the study asks for consent first)."""
        if self.page() == "consent":
            assert self.consent().status_code == 302
        self.get()
        return self.post({"page": "screening", **(answers or ELIGIBLE)})

    def to_profile(self) -> None:
        assert self.screening().status_code == 302
        if self.page() == "consent":  # a screening-first study
            assert self.consent().status_code == 302
        self.get()
        assert self.post({"page": "scenario"}).status_code == 302

    def submit_profile(
        self, profile: dict[str, str] | None = None, *, through_decision: bool = True
    ) -> Any:
        """Submit the profile; then (`through_decision`) read the decision page and press
        its Continue, as a participant does: on to the plans when they are ready, else to
        the waiting page. Returns the profile submission's response."""
        self.get()
        r = self.post({"page": "profile", **(profile or PROFILE)})
        if through_decision and self.page() == "decision":
            assert self.continue_decision().status_code == 302
        return r

    def continue_decision(self) -> Any:
        """Press Continue on the decision page (after viewing it)."""
        self.get()
        return self.post({"page": "decision"})

    def evaluation_data(self, **overrides: Any) -> dict[str, Any]:
        p = self.participant
        recourse = p.recourses.filter(evaluation__isnull=True).order_by("position").first()
        data: dict[str, Any] = {
            "page": f"evaluation-{recourse.position}",
            "recourse": str(recourse.pk),
            "acceptance": "5",
            "acceptance_why": "seems fair",
            "action": "3",
            "action_why": "too much work",
        }
        for key in recourse.changed:
            data[f"impossible_{key}"] = "no"
        data.update(overrides)
        return data


def start(client: Client, study: Study, query: str = "") -> Walker:
    """Open the study link (the welcome page, which creates nothing) and press its start
    button, posting the hidden panel fields as a browser would."""
    r = client.get(f"/s/{study.slug}/{query}")
    assert r.status_code == 200, r.status_code
    hidden = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', r.text))
    hidden.pop("csrfmiddlewaretoken", None)
    r = client.post(f"/s/{study.slug}/", {k: html.unescape(v) for k, v in hidden.items()})
    assert r.status_code == 302, r.status_code
    return Walker(client, r["Location"])


@pytest.fixture
def walker(study: Study, eager: None) -> Walker:
    return start(Client(), study)


@pytest.fixture
def evaluating(walker: Walker) -> Walker:
    """A participant on their first plan page."""
    walker.to_profile()
    walker.submit_profile()
    walker.get()
    assert walker.participant.state == Participant.State.EVALUATING
    return walker
