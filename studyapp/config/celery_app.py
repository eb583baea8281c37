"""The Celery application (cookiecutter-django style: its own module, autodiscovered tasks).

Configuration comes from Django settings under the ``CELERY_`` namespace, so the broker is
the embedded SQLite queue by default and Redis when ``CELERY_BROKER_URL`` is set. Beat runs
with django-celery-beat's database scheduler (``--scheduler
django_celery_beat.schedulers:DatabaseScheduler``), which copies ``CELERY_BEAT_SCHEDULE``
(the sweeper, the delayed-release schedule, the retention schedule) into the database, so the schedule and the
time each entry last ran survive restarts.
"""

import os
import sys

from celery import Celery
from celery.signals import worker_init, worker_process_init

from studyapp.config.env import int_env

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studyapp.config.settings")

app = Celery("studyapp")
app.config_from_object("django.conf:settings", namespace="CELERY")
# tasks live in the packages' own `tasks` modules, not in the app's top-level one
app.autodiscover_tasks(
    ["studyapp.generation", "studyapp.participation", "studyapp.studies", "studyapp.retention"]
)

#: the scheduler `scripts/run` and the compose worker start beat with
BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"


def worker_threads() -> int:
    """Native threads per worker process (STUDYAPP_WORKER_THREADS, default 1).

    A worker runs one task per process and the web server shares the cores; OpenMP, BLAS and
    torch threads beyond that spin at their barriers waiting for a core, which slows a fit
    many times over on a small shared host instead of speeding it up."""
    return int_env("STUDYAPP_WORKER_THREADS", 1, 1, 256)


@worker_init.connect
@worker_process_init.connect
def _limit_native_threads(**_: object) -> None:
    """Before a task runs: libraries loaded later read the environment, loaded ones are told."""
    n = worker_threads()
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = str(n)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=n)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(n)


@worker_init.connect
@worker_process_init.connect
def _task_metrics(**_: object) -> None:
    """Task run times, failures and recourse latencies for `/metrics` (studyapp/metrics)."""
    import studyapp.metrics.celery_signals  # noqa: F401 - connects the signal handlers
