"""`/metrics`: refused to anonymous and non-staff callers, and after participants walk the
study it shows request latency by page, recourse latency by method, queue depths and task
failures, with counts checked against what the test itself did and what the database holds."""

from __future__ import annotations

import os
import tempfile

# each test process its own sample folders, set before studyapp.metrics is first imported
os.environ.setdefault("STUDYAPP_METRICS_DIR", tempfile.mkdtemp(prefix="metrics-test-"))

from typing import Any  # noqa: E402

import pytest  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.test import Client  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from studyapp.config.celery_app import app as celery_app  # noqa: E402
from studyapp.metrics import celery_signals  # noqa: E402, F401 - task signals, as in a worker
from studyapp.models import Participant, Recourse, Study  # noqa: E402
from tests.studyapp.conftest import PROFILE, start  # noqa: E402

TOKEN = "scrape-token-for-the-test-0123456789"


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def value(found: dict, name: str, **labels: str) -> float:
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


def scrape(client: Client | None = None) -> dict:
    r = (client or Client()).get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert r.status_code == 200, r.content[:300]
    assert r["Content-Type"].startswith("text/plain; version=")
    return samples(r.content.decode())


@pytest.fixture(autouse=True)
def _token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUDYAPP_METRICS_TOKEN", TOKEN)


@pytest.mark.django_db
def test_anonymous_and_non_staff_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    anonymous = Client().get("/metrics")
    assert anonymous.status_code == 401
    assert anonymous["WWW-Authenticate"].startswith("Bearer")
    assert b"studyapp_" not in anonymous.content
    assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 403
    assert Client().get("/metrics", HTTP_AUTHORIZATION=f"Basic {TOKEN}").status_code == 403
    user = get_user_model().objects.create_user("someone", password="pw-0123456789")
    plain = Client()
    plain.force_login(user)
    assert plain.get("/metrics").status_code == 403
    staff = Client()
    user.is_staff = True
    user.save()
    staff.force_login(user)
    assert staff.get("/metrics").status_code == 200
    # no token configured: a bearer header opens nothing
    monkeypatch.delenv("STUDYAPP_METRICS_TOKEN")
    assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer ").status_code == 403
    assert Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 403


def _walk_to_plans(study: Study) -> tuple[int, int]:
    """A participant through the profile (recourses made eagerly at commit); returns how many
    GET and POST requests went to the participant page."""
    client = Client()
    w = start(client, study)
    calls = {"GET": 0, "POST": 0}
    get, post = w.get, w.post

    def counted_get() -> Any:
        calls["GET"] += 1
        return get()

    def counted_post(data: dict[str, Any], follow: bool = False) -> Any:
        calls["POST"] += 1
        return post(data, follow)

    w.get, w.post = counted_get, counted_post  # type: ignore[method-assign]
    w.to_profile()
    w.submit_profile(PROFILE)
    assert w.participant.generation in ("done", "empty")
    return calls["GET"], calls["POST"]


def test_a_bot_run_shows_page_and_recourse_latency(study: Study, eager: None) -> None:
    before = scrape()
    gets = posts = 0
    for _ in range(3):
        g, p = _walk_to_plans(study)
        gets, posts = gets + g, posts + p
    after = scrape()

    def grown(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    page = "studyapp_request_seconds_count"
    assert grown(page, view="participant", method="GET", status="2xx") == gets
    assert grown(page, view="participant", method="POST", status="3xx") == posts
    assert grown(page, view="start", method="GET", status="2xx") == 3
    # the label is the URL's name: no participant code becomes a series
    codes = set(Participant.objects.values_list("code", flat=True))
    assert not any(code in str(key) for key in after for code in codes)
    # recourse latency by method: one sample per participant per method in their set, whose
    # sum is the span the database holds (queued or first started, to stored)
    done = Participant.objects.filter(generation="done")
    assert done.count() >= 1
    expected: dict[str, list[float]] = {}
    for p in done:
        since = min(t for t in (p.generation_queued_at, p.generation_started_at) if t)
        span = (p.generation_finished_at - since).total_seconds()
        for m in set(Recourse.objects.filter(participant=p).values_list("method", flat=True)):
            expected.setdefault(m, []).append(span)
    for method, spans in expected.items():
        assert grown("studyapp_recourse_seconds_count", method=method) == len(spans)
        assert grown("studyapp_recourse_seconds_sum", method=method) == pytest.approx(
            sum(spans), abs=1e-3
        )
    assert grown("studyapp_task_seconds_count", task="studyapp.tasks.generate_recourses") == 3


def test_queue_depth_counts_waiting_messages(study: Study) -> None:
    """Messages sent and not consumed (the unit tests' in-memory broker, no worker)."""
    from studyapp.generation.tasks import fit_balanced_methods, generate_recourses

    names = celery_app.conf.task_routes
    recourse_q = names["studyapp.tasks.generate_recourses"]["queue"]
    fits_q = names["studyapp.tasks.fit_balanced_methods"]["queue"]
    base = scrape()
    for pk in (10**6, 10**6 + 1, 10**6 + 2):
        generate_recourses.delay(pk)
    fit_balanced_methods.delay(10**6)
    found = scrape()
    assert value(found, "studyapp_broker_up") == 1
    depth = "studyapp_queue_depth"
    assert value(found, depth, queue=recourse_q) - value(base, depth, queue=recourse_q) == 3
    assert value(found, depth, queue=fits_q) - value(base, depth, queue=fits_q) == 1


@celery_app.task(name="tests.metrics.boom")
def boom() -> None:
    raise ValueError("a task that fails")


def test_task_failures_are_counted_by_task(transactional_db: Any) -> None:
    name = "tests.metrics.boom"
    before = scrape()
    assert boom.apply(throw=False).failed()
    assert boom.apply(throw=False).failed()
    after = scrape()
    failures = "studyapp_task_failures_total"
    assert value(after, failures, task=name) - value(before, failures, task=name) == 2


def test_participants_waiting_for_recourses(study: Study) -> None:
    """No worker (the tasks stay in the in-memory queue): the participant waits, and the
    oldest wait is at least the time since their task was queued."""
    from django.utils import timezone

    w = start(Client(), study)
    w.to_profile()
    w.submit_profile(PROFILE)
    p = w.participant
    assert p.generation == "queued" and p.generation_queued_at is not None
    found = scrape()
    assert value(found, "studyapp_recourse_waiting", generation="queued") == 1
    assert value(found, "studyapp_recourse_waiting", generation="running") == 0
    oldest = value(found, "studyapp_recourse_oldest_wait_seconds")
    assert 0 < oldest <= (timezone.now() - p.generation_queued_at).total_seconds()
