"""The Jinja2 environment of the participant pages (`studyapp/jinja2/`).

Jinja2 renders a page for a fraction of the CPU Django's template language needs, and these
pages are what every participant loads. The pages must read byte for byte as they did under
Django's templates (bots and browser tests parse them), so the environment does what Django's
templates did:

* every ``{{ value }}`` is localized and escaped as Django escapes (`_finalize`: ``&#x27;``,
  ``&quot;``), where Jinja2 alone would write ``&#39;`` and ``&#34;``;
* ``_("…")`` is Django's gettext of the active language (the study's), not escaped, as Django
  did not escape a template's own strings; ``_("… %(name)s", name=value|django_escape)`` is
  ``{% blocktranslate %}`` (a string passes through ``django_escape``, as Django escaped it),
  so the msgids stay those of the committed catalogue;
* ``static``, ``url``, ``get_current_language`` and the filters ``linebreaks`` and ``date``
  are Django's.

A form's fields render through the forms' own renderer (`field_renderer`), one template each.

The pages are named ``studyapp/<page>.html``, and this environment serves those names only:
from the site's own folder first (`settings.SITE_TEMPLATES_DIR`, the top-level ``templates/``),
then the package's. Every other name is left to Django's engine, so a console template placed
in the same site folder is read as the Django template it is.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import jinja2
from django.template.defaultfilters import date as date_filter
from django.template.defaultfilters import linebreaks_filter
from django.templatetags.static import static
from django.urls import reverse
from django.utils import translation
from django.utils.formats import localize
from django.utils.safestring import mark_safe
from django.utils.timezone import template_localtime
from django.utils.translation import gettext, ngettext
from markupsafe import Markup

from studyapp.integrity import record as integrity_record


def _finalize(value: Any) -> Any:
    """A ``{{ value }}`` as Django's templates print it (`render_value_in_context`)."""
    if hasattr(value, "__html__"):
        return value
    if not isinstance(value, str):
        value = str(localize(template_localtime(value)))
    return Markup(html.escape(value))


def url(name: str, *args: Any) -> str:
    """``{% url name arg … %}``."""
    return reverse(name, args=args)


def linebreaks(value: Any) -> str:
    """Django's ``linebreaks`` filter; text already marked safe is not escaped again."""
    if hasattr(value, "__html__"):  # Markup, SafeString: as Django's SafeData
        value = mark_safe(str(value.__html__()))
    return linebreaks_filter(value, autoescape=True)


def date(value: Any, fmt: str | None = None) -> str:
    """Django's ``date`` filter, in the current time zone as in Django's templates."""
    return date_filter(template_localtime(value), fmt)


#: the participant pages' folder in each template folder, and the first part of their names
NAMESPACE = "studyapp"


def participant_pages(dirs: list[str]) -> jinja2.BaseLoader:
    """A loader of ``studyapp/…`` names from the ``studyapp`` folder of each of `dirs`, the
    first folder's first (a site's own pages before the packaged ones)."""
    folders = [Path(d) / NAMESPACE for d in dirs]
    return jinja2.PrefixLoader({NAMESPACE: jinja2.FileSystemLoader(folders)})


def environment(**options: Any) -> jinja2.Environment:
    """Django's Jinja2 backend calls this with its options (loader, autoescape, …); its loader
    over the engine's DIRS is kept to the participant pages' names."""
    loader = options.get("loader")
    if isinstance(loader, jinja2.FileSystemLoader):
        options["loader"] = participant_pages(loader.searchpath)
    options.setdefault("keep_trailing_newline", True)  # Django's templates keep it
    options["undefined"] = jinja2.ChainableUndefined  # a missing value prints "", as in Django
    env = jinja2.Environment(extensions=["jinja2.ext.i18n"], finalize=_finalize, **options)
    env.install_gettext_callables(gettext, ngettext, newstyle=True)  # type: ignore[attr-defined]
    env.globals.update(
        static=static,
        url=url,
        get_current_language=translation.get_language,
        integrity_on=integrity_record.collects,
    )
    env.filters.update(linebreaks=linebreaks, date=date, django_escape=_finalize)
    return env
