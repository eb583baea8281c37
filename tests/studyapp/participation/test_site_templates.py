"""A site's own templates (the top-level ``templates/`` folder) win over the packaged ones, for
participant pages (Jinja2) and console templates (Django) alike, and a console template there
is read by Django, not by the participant pages' engine."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from django.conf import settings
from django.test import Client, override_settings

ROOT = Path(settings.BASE_DIR)


def _templates_with(site: Path) -> list[dict[str, Any]]:
    """The TEMPLATES setting with `site` as the site's folder."""
    templates = copy.deepcopy(settings.TEMPLATES)
    for engine in templates:
        assert engine["DIRS"][0] == settings.SITE_TEMPLATES_DIR
        engine["DIRS"] = [site, *engine["DIRS"][1:]]
    return templates


def test_the_site_folder_comes_before_the_packaged_templates() -> None:
    assert settings.SITE_TEMPLATES_DIR == ROOT / "templates"
    assert (ROOT / "templates" / "README.md").is_file()
    assert [len(engine["DIRS"]) for engine in settings.TEMPLATES] == [2, 2]


def test_an_override_in_the_site_folder_wins(tmp_path: Path, db: Any) -> None:
    (tmp_path / "studyapp").mkdir()
    (tmp_path / "studyapp" / "index.html").write_text(
        '{% extends "studyapp/base.html" %}'
        '{% block content %}<p id="our-index">{{ _("Study") }} of our lab</p>{% endblock %}\n'
    )
    (tmp_path / "admin").mkdir()
    (tmp_path / "admin" / "login.html").write_text(
        '{% load static %}<p id="our-login">Our lab\'s console</p>\n'  # Django's syntax
    )
    client = Client()
    packaged_index, packaged_login = client.get("/"), client.get("/admin/login/")
    assert 'id="our-' not in packaged_index.text + packaged_login.text
    with override_settings(TEMPLATES=_templates_with(tmp_path)):
        index, login = client.get("/"), client.get("/admin/login/")
    assert index.status_code == 200 and '<p id="our-index">Study of our lab</p>' in index.text
    assert login.status_code == 200 and login.text == '<p id="our-login">Our lab\'s console</p>\n'
    assert client.get("/").text == packaged_index.text  # the setting restored, the package's again
