"""The Celery application (cookiecutter-django style: its own module, autodiscovered tasks).

Configuration comes from Django settings under the ``CELERY_`` namespace, so the broker is
the embedded SQLite queue by default and Redis when ``CELERY_BROKER_URL`` is set. Beat runs
with django-celery-beat's database scheduler (``--scheduler
django_celery_beat.schedulers:DatabaseScheduler``), which copies ``CELERY_BEAT_SCHEDULE``
(the sweeper, the delayed-release schedule) into the database, so the schedule and the
time each entry last ran survive restarts.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studyapp.config.settings")

app = Celery("studyapp")
app.config_from_object("django.conf:settings", namespace="CELERY")
# tasks live in the recourse-generation package, not in the app's top-level `tasks` module
app.autodiscover_tasks(["studyapp.generation", "studyapp.participation"])

#: the scheduler `scripts/run` and the compose worker start beat with
BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
