"""The console's admin site: its home leads with the studies and their coding, and the
tables a researcher never needs (the scheduler, login attempts, API tokens, accounts) come
after them, named for what they are.

Django sorts the admin home's apps by name, which puts "Auth Token", "Axes" and "Periodic
Tasks" above the studies a newcomer came for. `ConsoleAdminSite` is the default admin site
(`ConsoleAdminConfig` in INSTALLED_APPS), so every `admin.register` lands here. This module
is imported while Django loads its apps: it imports no models at the top.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.admin.apps import AdminConfig
from django.http import HttpRequest
from django.template.response import TemplateResponse

#: the admin home's apps in this order; apps not named here come last, by name
APP_ORDER = ("studyapp", "auth", "authtoken", "django_celery_beat", "axes")
#: what the home calls the apps that are not the research itself
APP_NAMES = {
    "auth": "Accounts: users and groups",
    "authtoken": "Accounts: API tokens",
    "django_celery_beat": "System: scheduler (Celery beat, for administrators)",
    "axes": "System: login attempts (django-axes, for administrators)",
}
#: within an app, these models first (the rest by name)
MODELS_FIRST = {"studyapp": ("Study", "Participant")}
#: how many studies the home lists (most recent first)
HOME_STUDIES = 20


def _app_rank(app: dict[str, Any]) -> tuple[int, str]:
    label = app["app_label"]
    rank = APP_ORDER.index(label) if label in APP_ORDER else len(APP_ORDER)
    return rank, app["name"].lower()


def _model_rank(app_label: str, model: dict[str, Any]) -> tuple[int, str]:
    first = MODELS_FIRST.get(app_label, ())
    name = model["object_name"]
    return (first.index(name) if name in first else len(first)), model["name"]


class ConsoleAdminSite(admin.AdminSite):
    site_header = "Recourse study console"
    site_title = "Recourse study console"
    index_title = "Studies and coding"
    index_template = "admin/console_index.html"

    def get_app_list(self, request: HttpRequest, app_label: str | None = None) -> list[Any]:
        apps = sorted(self._build_app_dict(request, app_label).values(), key=_app_rank)
        for app in apps:
            app["name"] = APP_NAMES.get(app["app_label"], app["name"])
            app["models"].sort(key=lambda m, label=app["app_label"]: _model_rank(label, m))
        return apps

    def index(self, request: HttpRequest, extra_context: Any = None) -> TemplateResponse:
        """The home, with the user's studies first: each with its monitor, coding and design
        check, the pages a study is run from."""
        from studyapp.studies import access  # the models load after this app's config

        studies = []
        if access.may(request.user, "studyapp.view_study"):
            studies = list(access.studies_for(request.user).order_by("-created_at")[:HOME_STUDIES])
        context = {
            "console_studies": studies,
            "may_add_study": request.user.has_perm("studyapp.add_study"),
            **(extra_context or {}),
        }
        return super().index(request, context)


class ConsoleAdminConfig(AdminConfig):
    """django.contrib.admin with the console's site as the default one."""

    default_site = "studyapp.console.site.ConsoleAdminSite"
