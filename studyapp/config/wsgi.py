"""WSGI entry point (gunicorn studyapp.config.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studyapp.config.settings")
application = get_wsgi_application()
