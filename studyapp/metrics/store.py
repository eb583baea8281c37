"""The metric objects (their samples go to the folder the package's __init__ chose)."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

#: page latencies: participants' pages should stay well under 200 ms
REQUEST_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.35, 0.5, 1.0, 2.0, 5.0, 10.0)
#: from queueing a participant's recourse task to their recourses stored
RECOURSE_BUCKETS = (0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0)

REQUEST_SECONDS = Histogram(
    "studyapp_request_seconds",
    "Time to answer a request, by URL name (not path), method and status class.",
    ("view", "method", "status"),
    buckets=REQUEST_BUCKETS,
)
RECOURSE_SECONDS = Histogram(
    "studyapp_recourse_seconds",
    "Time from queueing a participant's recourse task to their recourses stored, "
    "by recourse method (a set with several methods counts once for each).",
    ("method",),
    buckets=RECOURSE_BUCKETS,
)
TASK_SECONDS = Histogram(
    "studyapp_task_seconds",
    "Run time of a Celery task in a worker, by task name.",
    ("task",),
    buckets=(0.1, 0.5, 1.0, 5.0, 30.0, 60.0, 300.0, 900.0, 3600.0),
)
TASK_FAILURES = Counter(
    "studyapp_task_failures_total",
    "Celery tasks that raised (after their own retries gave up), by task name.",
    ("task",),
)
TASK_RETRIES = Counter(
    "studyapp_task_retries_total", "Celery task retries, by task name.", ("task",)
)
