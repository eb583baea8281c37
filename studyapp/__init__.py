"""The Django side of the platform: participant pages, admin, Celery tasks, commands.

The Celery app is imported here so that `shared_task` binds to it in every process.
"""

from studyapp.config.celery_app import app as celery_app

__all__ = ["celery_app"]
