"""Celery queues per kind of work, so each worker pool can be sized on its own.

A participant's recourses (`recourse`) must never wait behind a method fit or a design check
that takes minutes (`fits`); the delayed-release schedule and its e-mails (`mail`) and data
exports (`exports`) have their own queues as well; the beat housekeeping (sweeper,
retention) stays on the default queue. Names come from the environment
(``STUDYAPP_QUEUE_RECOURSE`` and so on); unset, they are the kind itself, prefixed with
``STUDYAPP_QUEUE`` and a dot when that is set (tests and deployments sharing one broker then
never see each other's messages).

A worker started without ``-Q`` consumes every queue listed here (``task_queues``), which is
how the embedded default's single worker keeps running everything.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from kombu import Exchange, Queue

#: the kinds of work and the environment variable naming each one's queue
KINDS: dict[str, str] = {
    "recourse": "STUDYAPP_QUEUE_RECOURSE",
    "fits": "STUDYAPP_QUEUE_FITS",
    "mail": "STUDYAPP_QUEUE_MAIL",
    "exports": "STUDYAPP_QUEUE_EXPORTS",
}

#: task name (or glob) -> kind; tasks not listed go to the default queue
ROUTED: dict[str, str] = {
    "studyapp.tasks.generate_recourses": "recourse",
    "studyapp.tasks.fit_balanced_methods": "fits",
    "studyapp.tasks.run_design_check": "fits",
    "studyapp.tasks.release_due": "mail",
    "studyapp.tasks.send_*": "mail",
    "studyapp.tasks.export_*": "exports",
}


def queue_names(prefix: str = "", env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Each kind's queue name: its variable when set, else ``<prefix>.<kind>`` (or the kind)."""
    env = os.environ if env is None else env
    names = {}
    for kind, var in KINDS.items():
        given = env.get(var, "").strip()
        names[kind] = given or (f"{prefix}.{kind}" if prefix else kind)
    return names


def task_routes(names: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """Celery's ``task_routes``: every routed task to its kind's queue."""
    return {task: {"queue": names[kind]} for task, kind in ROUTED.items()}


def task_queues(names: Mapping[str, str], default: str) -> tuple[Queue, ...]:
    """Celery's ``task_queues``: the default queue first, then one per kind (deduplicated:
    a deployment may point two kinds at one queue)."""
    seen: list[str] = []
    for name in (default, *names.values()):
        if name not in seen:
            seen.append(name)
    return tuple(Queue(name, Exchange(name), routing_key=name) for name in seen)
