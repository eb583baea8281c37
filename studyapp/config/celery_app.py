"""The Celery application (cookiecutter-django style: its own module, autodiscovered tasks).

Configuration comes from Django settings under the ``CELERY_`` namespace, so the broker is
the embedded SQLite queue by default and Redis when ``CELERY_BROKER_URL`` is set.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studyapp.config.settings")

app = Celery("studyapp")
app.config_from_object("django.conf:settings", namespace="CELERY")
# tasks live in the recourse-generation package, not in the app's top-level `tasks` module
app.autodiscover_tasks(["studyapp.generation"])
