"""WSGI entry point (gunicorn studyapp.config.wsgi).

After loading, the app resolves its URLs and loads its participant templates once and then
freezes everything loaded so far out of the garbage collector's reach (`gc.freeze`): the
modules, URL patterns and compiled templates live as long as the process, yet every full
collection would walk them again, a large share of a short request's CPU under load.
"""

import gc
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studyapp.config.settings")
application = get_wsgi_application()


def _warm_up() -> None:
    """Load what the first participant requests would load, so that it is frozen too."""
    from pathlib import Path

    from django.template import engines
    from django.urls import get_resolver

    from studyapp.participation.forms import PAGE_RENDERER

    get_resolver().url_patterns  # noqa: B018 - imports every view module
    folder = Path(__file__).resolve().parents[1] / "jinja2" / "studyapp"
    for path in sorted(folder.glob("*.html")):
        engines["jinja2"].get_template(f"studyapp/{path.name}")
    for name in (PAGE_RENDERER.field_template_name, "django/forms/widgets/hidden.html"):
        PAGE_RENDERER.get_template(name)


_warm_up()
gc.collect()
gc.freeze()
