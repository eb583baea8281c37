"""The coding app; when Django loads it, it adds its tables to the study export."""

from __future__ import annotations

from django.apps import AppConfig


class CodingConfig(AppConfig):
    name = "studyapp.coding"
    label = "studyapp_coding"
    verbose_name = "Qualitative coding"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from studyapp.coding.export_tables import CODING_TABLES
        from studyapp.export.extensions import register

        register(CODING_TABLES)
