"""A plain admin: list displays and filters to watch a study run (the researcher console is
another issue). A live study's design and pool are read-only here, as in the services."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from .models import Evaluation, PageVisit, Participant, Profile, Recourse, Study


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ("slug", "title", "state", "design", "decision_model", "pool_rows", "created_at")
    list_filter = ("state",)
    search_fields = ("slug", "title")
    exclude = ("pool_csv",)

    def get_readonly_fields(self, request: HttpRequest, obj: Study | None = None) -> Any:
        frozen = ("schema", "schema_hash", "pool_hash", "pool_rows", "decision_model")
        if obj is not None and obj.state != Study.State.DRAFT:
            return (*frozen, "design", "seed")
        return frozen


@admin.register(Participant)
class ParticipantAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "study",
        "state",
        "generation",
        "flagged",
        "gender",
        "age",
        "income_band",
        "created_at",
        "finished_at",
    )
    list_filter = ("study", "state", "generation", "flagged")
    search_fields = ("recruitment_id", "completion_code")
    readonly_fields = ("code", "created_at", "updated_at")


@admin.register(Profile)
class ProfileAdmin(admin.ModelAdmin):
    list_display = ("participant", "decision", "submitted_at")


@admin.register(Recourse)
class RecourseAdmin(admin.ModelAdmin):
    list_display = ("participant", "position", "strategy", "sparsity", "proximity", "pool_id")
    list_filter = ("strategy", "participant__study")


@admin.register(Evaluation)
class EvaluationAdmin(admin.ModelAdmin):
    list_display = ("participant", "recourse", "acceptance", "action", "seconds_on_page")
    list_filter = ("participant__study",)


@admin.register(PageVisit)
class PageVisitAdmin(admin.ModelAdmin):
    list_display = ("participant", "page", "entered_at", "exited_at", "views")
    list_filter = ("page",)
