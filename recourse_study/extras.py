"""Which optional extra each third-party package of `recourse-study` comes with, so that a
missing one is named in one line with the command that installs it: a plain `pip install .`
has the engine and the analysis but no Django."""

from __future__ import annotations

import importlib.util
import sys

DIST = "recourse-study-platform"

#: import name -> the extra of pyproject.toml that installs it
EXTRA_OF_MODULE: dict[str, str] = {
    "django": "study",
    "rest_framework": "study",
    "django_filters": "study",
    "drf_spectacular": "study",
    "drf_spectacular_sidecar": "study",
    "django_jsonform": "study",
    "axes": "study",
    "ipware": "study",
    "pydantic": "study",
    "celery": "study",
    "kombu": "study",
    "django_celery_beat": "study",
    "sqlalchemy": "study",
    "dj_database_url": "study",
    "gunicorn": "study",
    "whitenoise": "study",
    "jinja2": "study",
    "psycopg": "study",
    "redis": "study",
    "torch": "methods",
    "gymnasium": "methods",
}

#: what every `recourse-study` command imports on start (the others only on some paths:
#: psycopg with PostgreSQL, redis with Redis, torch with a method that needs it)
STARTUP = (
    "django",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "django_jsonform",
    "axes",
    "pydantic",
    "celery",
    "kombu",
    "django_celery_beat",
    "dj_database_url",
    "whitenoise",
    "jinja2",
)


def install_hint(module: str) -> str | None:
    """The one-line message for a missing `module`, or None when no extra provides it."""
    extra = EXTRA_OF_MODULE.get(module.split(".")[0])
    if extra is None:
        return None
    return (
        f"error: recourse-study needs the {extra!r} extra (no module named {module!r}); "
        f"install it with: pip install '{DIST}[{extra}]'"
    )


def missing_at_startup() -> str | None:
    """The message for the first start-up package that is not installed, else None."""
    for module in STARTUP:
        # a module already imported is installed (kombu replaces its own module object with
        # one whose __spec__ is None, on which find_spec raises)
        if module not in sys.modules and importlib.util.find_spec(module) is None:
            return install_hint(module)
    return None
