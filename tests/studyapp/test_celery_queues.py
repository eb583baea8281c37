"""Celery queues per kind of work: routing through Celery's own router, names from the
environment, and the long tasks' delivery settings."""

from __future__ import annotations

import pytest
from kombu import Queue

from studyapp.config import celery_queues
from studyapp.config.celery_app import app


def test_each_kind_of_work_goes_to_its_own_queue() -> None:
    def route(task: str) -> str:
        return app.amqp.router.route({}, task)["queue"].name

    names = celery_queues.queue_names()
    assert route("studyapp.tasks.generate_recourses") == names["recourse"]
    assert route("studyapp.tasks.fit_balanced_methods") == names["fits"]
    assert route("studyapp.tasks.run_design_check") == names["fits"]
    assert route("studyapp.tasks.release_due") == names["mail"]
    assert route("studyapp.tasks.export_study") == names["exports"]  # a future export task
    default = app.conf.task_default_queue
    assert route("studyapp.tasks.sweep_waiting") == default
    assert route("studyapp.tasks.apply_retention") == default
    assert len({default, *names.values()}) == 5
    # a worker started without -Q (the embedded default) consumes every one of them
    assert set(app.amqp.queues) == {default, *names.values()}


def test_names_come_from_the_environment() -> None:
    assert celery_queues.queue_names("", {}) == {
        "recourse": "recourse",
        "fits": "fits",
        "mail": "mail",
        "exports": "exports",
    }
    # a deployment's own prefix (tests sharing one Redis): every kind under it
    assert celery_queues.queue_names("site-a", {})["fits"] == "site-a.fits"
    given = celery_queues.queue_names("site-a", {"STUDYAPP_QUEUE_RECOURSE": "fast"})
    assert given["recourse"] == "fast" and given["mail"] == "site-a.mail"
    routes = celery_queues.task_routes(given)
    assert routes["studyapp.tasks.generate_recourses"] == {"queue": "fast"}


def test_two_kinds_on_one_queue_are_declared_once() -> None:
    names = celery_queues.queue_names("", {"STUDYAPP_QUEUE_EXPORTS": "mail"})
    queues = celery_queues.task_queues(names, "celery")
    assert [q.name for q in queues] == ["celery", "recourse", "fits", "mail"]
    assert all(isinstance(q, Queue) and q.routing_key == q.name for q in queues)


@pytest.mark.parametrize(
    "task", ["studyapp.tasks.fit_balanced_methods", "studyapp.tasks.run_design_check"]
)
def test_long_tasks_are_acknowledged_late_one_at_a_time(task: str) -> None:
    app.loader.import_default_modules()  # the tasks modules, as a worker imports them
    t = app.tasks[task]
    assert t.acks_late and t.time_limit >= 3600
    assert app.conf.worker_prefetch_multiplier == 1
    assert app.conf.task_reject_on_worker_lost
