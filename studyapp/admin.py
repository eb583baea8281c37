"""A plain admin: list displays and filters to watch a study run (the researcher console is
another issue). A live study's design and pool are read-only here, as in the services."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest

from . import services
from .models import Evaluation, PageVisit, Participant, Profile, Recourse, Study


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ("slug", "title", "state", "design", "decision_model", "pool_rows", "created_at")
    list_filter = ("state",)
    search_fields = ("slug", "title")
    exclude = ("pool_csv",)
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
    actions = ("go_live", "close")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # studies are created by services (create_demo_study), which validate

    def get_readonly_fields(self, request: HttpRequest, obj: Study | None = None) -> Any:
        # state moves only through the actions below (services.study_set_state)
        frozen = ("state", "schema", "schema_hash", "pool_hash", "pool_rows", "decision_model")
        if obj is not None and obj.state != Study.State.DRAFT:
            return (*frozen, "design", "seed")
        return frozen

    def _move(self, request: HttpRequest, queryset: QuerySet[Study], state: str) -> None:
        for study in queryset:
            try:
                services.study_set_state(study=study, state=state)
            except services.StudyError as exc:
                self.message_user(request, str(exc), messages.ERROR)
            else:
                self.message_user(request, f"{study.slug} is now {state}")

    @admin.action(description="Go live (freezes the design)")
    def go_live(self, request: HttpRequest, queryset: QuerySet[Study]) -> None:
        self._move(request, queryset, Study.State.LIVE)

    @admin.action(description="Close (no new participants)")
    def close(self, request: HttpRequest, queryset: QuerySet[Study]) -> None:
        self._move(request, queryset, Study.State.CLOSED)


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
