"""The researcher console in the Django admin: study setup, settings, pool upload with a
preview, state changes, duplication; participants and their data, read-only.

Staff researchers (not only superusers) use it: every list and object goes through
`studyapp.access` (owner, shared with, superuser). A live study's design, conditions,
schema, pool and the participant-facing settings are read-only (the list the API uses too,
`studies.updates.DRAFT_ONLY`). The admin validates with its forms and writes through the
study services only (`save_model`, `save_related`, `delete_model`, the actions), never with
the ORM. The custom pages live in `console/admin_views.py`.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import flatten_fieldsets
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from studyapp.console import (
    admin_views,
    decision_settings,
    inherited_eligibility,
    model_views,
    pool_collection_views,
    question_preview,
    setting_readout,
)
from studyapp.console.forms import StudyChangeForm, eligibility_field
from studyapp.console.resume_link import copy_resume_link as give_resume_link
from studyapp.definition.errors import StudyError
from studyapp.definition.release_schedule import RELEASE_SETTINGS
from studyapp.models import (
    DeletionReceipt,
    Evaluation,
    PageVisit,
    Participant,
    Profile,
    Recourse,
    Study,
    Withdrawal,
)
from studyapp.participation import preview, withdrawal
from studyapp.studies import access, duplicate, text_checks, updates
from studyapp.studies import services as study_services


class StudyFilter(admin.SimpleListFilter):
    """The study filter in a list's sidebar, showing only the studies this user may see."""

    title = "study"
    parameter_name = "study"
    lookup = "study_id"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        studies = access.studies_for(request.user).order_by("slug")
        return [(str(s.pk), s.slug) for s in studies]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = self.value()
        if value is None:
            return queryset
        if not value.isdigit():
            return queryset.none()
        return queryset.filter(**{self.lookup: int(value)})


class ParticipantStudyFilter(StudyFilter):
    lookup = "participant__study_id"


class AccessMixin:
    """Lists and objects restricted to the studies `access.studies_for` the user."""

    #: lookup from this model to its study ("" for Study itself)
    study_path = "study"

    def _study_of(self, obj: Any) -> Study:
        for part in self.study_path.split("__") if self.study_path else []:
            obj = getattr(obj, part)
        return obj

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        qs = super().get_queryset(request)  # type: ignore[misc]
        if request.user.is_superuser:
            return qs
        studies = access.studies_for(request.user).values("pk")
        lookup = f"{self.study_path}__in" if self.study_path else "pk__in"
        return qs.filter(**{lookup: studies})

    def _may(self, request: HttpRequest, obj: Any) -> bool:
        return obj is None or access.can_access(request.user, self._study_of(obj))

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return super().has_view_permission(request, obj) and self._may(request, obj)  # type: ignore[misc]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return super().has_change_permission(request, obj) and self._may(request, obj)  # type: ignore[misc]


class ReadOnlyMixin(AccessMixin):
    """What participants submitted is never edited or deleted here (deletion on request has
    its own action on participants)."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Study)
class StudyAdmin(AccessMixin, admin.ModelAdmin):
    study_path = ""
    form = StudyChangeForm
    change_form_template = "admin/studyapp/study/change_form.html"
    list_display = (
        "slug",
        "title",
        "state",
        "owner",
        "language",
        "design",
        "pool_rows",
        "created_at",
        "monitor_link",
    )
    list_filter = ("state", "language")
    search_fields = ("slug", "title")
    actions = ("go_live", "close", "duplicate")

    # --- permissions ----------------------------------------------------------------------
    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        allowed = super().has_delete_permission(request, obj)
        return allowed and (obj is None or access.is_owner(request.user, obj))

    # --- the change form --------------------------------------------------------------------
    def get_fieldsets(self, request: HttpRequest, obj: Study | None = None) -> Any:
        questions = self._questions(obj)
        methods = ["method_params", "method_fallback", "design_check_thresholds"]
        design = ["design", "seed", "decision_model", "model_file", *methods]
        if not request.user.is_superuser:
            # model files are unpickled when loaded: only superusers may upload one
            design = ["design", "seed", "decision_model", *methods]
        if obj is not None and obj.state != Study.State.DRAFT:
            design = ["design", "seed", "decision_model", *methods]
            eligibility = ["eligibility"]
        else:
            eligibility = [eligibility_field(q) for q in questions if q["type"] != "integer"]
        design.insert(design.index("decision_model") + 1, "model_card")
        # what the decision page does, beside the model that decides
        at = design.index("method_params")
        design[at:at] = list(decision_settings.NAMES)
        inherited = inherited_eligibility.inherited_rules(obj.schema) if obj is not None else {}
        screening = {
            "fields": eligibility,
            "description": inherited_eligibility.section_note(
                inherited, draft=obj is None or obj.state == Study.State.DRAFT
            ),
        }
        return setting_readout.swap(
            self._fieldsets(design, screening), self._readouts(request, obj)
        )

    def _readouts(self, request: HttpRequest, obj: Study | None) -> set[str]:
        """Settings shown read-only as labelled forms (the structured ones and the decision
        page's): those frozen on a live study, all of them to a researcher who may only view it."""
        if obj is None:
            return set()
        names = {*setting_readout.READOUTS, *decision_settings.NAMES}
        if not self.has_change_permission(request, obj):
            return names
        return names & set(updates.frozen_parts(obj))

    def _fieldsets(self, design: list[str], screening: dict[str, Any]) -> list[Any]:
        return [
            (None, {"fields": ["slug", "title", "state", "owner", "shared_with", "links"]}),
            (
                "Participant pages",
                {
                    "fields": ["language", "languages", "page_order", "texts", "consent_version"]
                    + ["waiting_timeout_s", "page_timeouts"]
                },
            ),
            (
                "Researcher-defined questions",
                {"fields": ["questions", "random_item_order", "questions_preview"]},
            ),
            ("Design and decision model", {"fields": design}),
            ("Eligibility (screening)", screening),
            ("Conditions and quotas", {"fields": ["assignment", "conditions", "quotas"]}),
            (
                "Recruitment",
                {"fields": ["outcome_codes", "panel_param", "assignment_timeout_minutes"]},
            ),
            (
                "Attention checks",
                {"fields": ["attention_checks", "attention_max_failures", "attention_rule"]},
            ),
            ("Pool and schema", {"fields": ["pool_summary", "schema_hash", "schema_summary"]}),
            (
                "Study kind and delayed release",
                {"fields": ["kind", *RELEASE_SETTINGS, "time_zone", "waves"]},
            ),
            ("Data protection (retention)", {"fields": ["retention"]}),
            ("Integrity signals", {"fields": ["integrity_signals"]}),
        ]

    def get_readonly_fields(self, request: HttpRequest, obj: Study | None = None) -> Any:
        fixed = ["slug", "state", "owner", "links", "pool_summary", "schema_hash"]
        fixed += ["questions_preview"]
        fixed += ["schema_summary", "eligibility", "model_card"]
        fixed += [f"{name}{setting_readout.SUFFIX}" for name in setting_readout.READOUTS]
        fixed += list(decision_settings.admin_methods())
        if obj is not None and not access.is_owner(request.user, obj):
            fixed.append("shared_with")
        if obj is not None:
            fixed += [f for f in updates.frozen_parts(obj) if f not in fixed]
        return fixed

    def _questions(self, obj: Study | None) -> list[dict[str, Any]]:
        return updates.questions_of(obj.schema) if obj is not None else []

    def get_form(self, request: HttpRequest, obj: Study | None = None, **kwargs: Any) -> Any:
        fields: dict[str, Any] = {}
        if obj is not None and obj.state == Study.State.DRAFT:
            inherited = inherited_eligibility.inherited_rules(obj.schema)
            for q in self._questions(obj):
                if q["type"] == "integer":
                    continue
                current = q.get("eligible" if q["type"] == "choice" else "eligible_only")
                options = [(str(i), o) for i, o in enumerate(q["options"], start=1)]
                fields[eligibility_field(q)] = forms.MultipleChoiceField(
                    label=q.get("label", q["key"]),
                    choices=options,
                    required=False,
                    initial=[str(c) for c in (current or [])],
                    widget=forms.CheckboxSelectMultiple,
                    help_text=inherited_eligibility.help_text(q, inherited),
                )
        kwargs["form"] = type("StudyChangeFormFor", (self.form,), fields)
        form = super().get_form(request, obj, **kwargs)
        # declared fields (the structured editors) are not dropped by the admin's `fields`:
        # only what the fieldsets show, and not read-only, may be posted
        shown = set(flatten_fieldsets(self.get_fieldsets(request, obj)))
        shown -= set(self.get_readonly_fields(request, obj))
        for name in [n for n in form.base_fields if n not in shown]:
            form.base_fields.pop(name)
        if not request.user.is_superuser:
            form.base_fields.pop("model_file", None)  # a posted file is then ignored
        return form

    def save_model(self, request: HttpRequest, obj: Study, form: Any, change: bool) -> None:
        """The form checked the settings; the service applies them all or nothing."""
        updates.study_update(
            study=obj, changes=form.changes, model_blob=form.cleaned_data.get("model_blob")
        )
        for warning in text_checks.study_warnings(obj):
            self.message_user(request, warning, messages.WARNING)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        if "shared_with" in form.cleaned_data:
            updates.study_set_shared_with(
                study=form.instance, users=form.cleaned_data["shared_with"]
            )

    def delete_model(self, request: HttpRequest, obj: Study) -> None:
        updates.study_delete(study=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Study]) -> None:
        for study in queryset:
            try:
                updates.study_delete(study=study)
            except StudyError as exc:
                self.message_user(request, str(exc), messages.ERROR)

    # --- read-only displays -----------------------------------------------------------------
    @admin.display(description="Console")
    def links(self, obj: Study) -> str:
        if obj.pk is None:
            return "-"
        return format_html(
            '<a href="{}">Monitor</a> · <a href="{}">Export (ZIP)</a> · <a href="{}">Pool</a> · '
            '<a href="{}">Participant link</a> · <a id="preview-link" href="{}">Preview (test '
            "participant: left out of quotas, monitor and export)</a>",
            reverse("console-monitor", args=[obj.slug]),
            reverse("console-export", args=[obj.slug]),
            reverse("admin:studyapp_study_pool", args=[obj.pk]),
            reverse("start", args=[obj.slug]),
            preview.preview_link(obj),
        )

    @admin.display(description="Preview of the questions")
    def questions_preview(self, obj: Study) -> str:
        return question_preview.render(obj) if obj.pk else "-"

    @admin.display(description="Monitor")
    def monitor_link(self, obj: Study) -> str:
        return format_html('<a href="{}">monitor</a>', reverse("console-monitor", args=[obj.slug]))

    @admin.display(description="Stored model")
    def model_card(self, obj: Study) -> str:
        if obj.pk is None:
            return "-"
        return format_html(
            '{}<p><a id="decision-model-link" href="{}">Train or upload a decision model</a></p>',
            model_views.model_card_html(obj),
            reverse("admin:studyapp_study_decision_model", args=[obj.pk]),
        )

    @admin.display(description="Pool")
    def pool_summary(self, obj: Study) -> str:
        return f"{obj.pool_rows:,} profiles (sha256 {obj.pool_hash[:12]}…)"

    @admin.display(description="Schema")
    def schema_summary(self, obj: Study) -> str:
        items = [it.get("key", "?") for it in obj.schema.get("profile_items", [])]
        return f"{obj.schema.get('name', '')}: {len(items)} items ({', '.join(items)})"

    @admin.display(description="Eligibility")
    def eligibility(self, obj: Study) -> str:
        rules = []
        inherited = inherited_eligibility.inherited_rules(obj.schema)
        for q in self._questions(obj):
            codes = q.get("eligible") or q.get("eligible_only")
            if codes:
                labels = [q["options"][c - 1] for c in codes if 1 <= c <= len(q["options"])]
                mark = " (the reference study's default)" if q["key"] in inherited else ""
                rules.append(f"{q['key']}{mark}: {', '.join(labels)}")
        return "; ".join(rules) or "everyone"

    # --- pages beyond the model form --------------------------------------------------------
    #: the study's own pages: (route below <pk>/, view(model_admin, request, pk), url name)
    study_pages = (
        ("pool/", admin_views.pool_upload_view, "pool"),
        (
            "pool-from-collection/",
            pool_collection_views.pool_from_collection_view,
            "pool_from_collection",
        ),
        ("state/", admin_views.state_view, "state"),
        ("decision-model/", model_views.decision_model_view, "decision_model"),
        ("duplicate/", admin_views.duplicate_view, "duplicate"),
    )

    def get_urls(self) -> list[Any]:
        wrap = self.admin_site.admin_view
        return [
            path(
                "setup/",
                wrap(lambda r: admin_views.study_setup_view(self, r)),
                name="studyapp_study_setup",
            ),
            *(
                path(f"<int:pk>/{route}", wrap(partial(view, self)), name=f"studyapp_study_{name}")
                for route, view, name in self.study_pages
            ),
            *super().get_urls(),
        ]

    def add_view(self, request: HttpRequest, form_url: str = "", extra_context: Any = None) -> Any:
        """The "Add study" button opens the setup page (schema, pool, design)."""
        return admin_views.study_setup_view(self, request)

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: Any = None
    ) -> HttpResponse:
        obj = self.get_object(request, object_id)
        extra = dict(extra_context or {})
        if obj is not None:
            extra["study"] = obj
            extra["is_owner"] = access.is_owner(request.user, obj)
            extra["can_change"] = self.has_change_permission(request, obj)
        return super().change_view(request, object_id, form_url, extra)

    # --- actions ----------------------------------------------------------------------------
    def _move(self, request: HttpRequest, queryset: QuerySet[Study], state: str) -> None:
        for study in queryset:
            if not self.has_change_permission(request, study):
                self.message_user(request, f"{study.slug}: not yours to change", messages.ERROR)
                continue
            try:
                study_services.study_set_state(study=study, state=state)
            except StudyError as exc:
                self.message_user(request, str(exc), messages.ERROR)
            else:
                self.message_user(request, f"{study.slug} is now {state}")
                for warning in text_checks.text_warnings(study):
                    self.message_user(request, f"{study.slug}: {warning}", messages.WARNING)

    @admin.action(description="Go live (freezes the design)")
    def go_live(self, request: HttpRequest, queryset: QuerySet[Study]) -> None:
        self._move(request, queryset, Study.State.LIVE)

    @admin.action(description="Close (no new participants)")
    def close(self, request: HttpRequest, queryset: QuerySet[Study]) -> None:
        self._move(request, queryset, Study.State.CLOSED)

    @admin.action(description="Duplicate as new drafts (slug-copy)")
    def duplicate(self, request: HttpRequest, queryset: QuerySet[Study]) -> None:
        for study in queryset:
            if not access.is_owner(request.user, study):
                self.message_user(request, f"{study.slug}: only its owner may duplicate it")
                continue
            slug = admin_views.free_slug(f"{study.slug}-copy")
            try:
                copy = duplicate.study_duplicate(study=study, slug=slug, owner=request.user)
            except StudyError as exc:
                self.message_user(request, str(exc), messages.ERROR)
            else:
                self.message_user(request, f"{study.slug} duplicated as {copy.slug} (draft)")


for _name, _show in {
    **setting_readout.admin_methods(),
    **decision_settings.admin_methods(),
}.items():
    setattr(StudyAdmin, _name, _show)  # the read-only forms `get_fieldsets` swaps in


@admin.register(Participant)
class ParticipantAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = (
        "id",
        "study",
        "condition",
        "state",
        "generation",
        "flagged",
        "attention_failures",
        "gender",
        "age",
        "created_at",
        "finished_at",
    )
    list_filter = (StudyFilter, "state", "condition", "generation", "flagged")
    # never the access code: it is the participant's login (see copy_resume_link)
    search_fields = ("recruitment_id", "completion_code")
    exclude = ("code",)
    actions = ("delete_on_request", "copy_resume_link")

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        acts = super().get_actions(request)
        acts.pop("delete_selected", None)
        if not request.user.has_perm("studyapp.delete_participant"):
            acts.pop("delete_on_request", None)
        if not request.user.has_perm("studyapp.change_participant"):
            acts.pop("copy_resume_link", None)
        return acts

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # flagged / flag_reason only (see get_readonly_fields)
        return AccessMixin.has_change_permission(self, request, obj)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        skip = ("flagged", "flag_reason", *self.exclude)  # editable, or never shown
        return [f.name for f in Participant._meta.fields if f.name not in skip]

    @admin.action(description="Copy resume link (one participant, on their request; logged)")
    def copy_resume_link(self, request: HttpRequest, queryset: QuerySet[Participant]) -> Any:
        return give_resume_link(self, request, queryset)

    @admin.action(description="Delete on the participant's request (logged)")
    def delete_on_request(self, request: HttpRequest, queryset: QuerySet[Participant]) -> Any:
        if request.POST.get("confirm") != "yes":
            return TemplateResponse(
                request,
                "admin/studyapp/participant/delete_on_request.html",
                {
                    **self.admin_site.each_context(request),
                    "title": "Delete participants on request",
                    "participants": queryset,
                    "action": "delete_on_request",
                    "opts": self.model._meta,
                },
            )
        n = 0
        for p in queryset:
            withdrawal.participant_delete(participant=p, by_user=request.user)
            n += 1
        self.message_user(request, f"{n} participant(s) deleted; the withdrawal log keeps who/when")
        return None


@admin.register(Profile)
class ProfileAdmin(ReadOnlyMixin, admin.ModelAdmin):
    study_path = "participant__study"
    list_display = ("participant", "decision", "submitted_at")
    list_filter = (ParticipantStudyFilter, "decision")


@admin.register(Recourse)
class RecourseAdmin(ReadOnlyMixin, admin.ModelAdmin):
    study_path = "participant__study"
    list_display = ("participant", "position", "strategy", "sparsity", "proximity", "pool_id")
    list_filter = (ParticipantStudyFilter, "strategy")


@admin.register(Evaluation)
class EvaluationAdmin(ReadOnlyMixin, admin.ModelAdmin):
    study_path = "participant__study"
    list_display = ("participant", "recourse", "acceptance", "action", "seconds_on_page")
    list_filter = (ParticipantStudyFilter,)


@admin.register(PageVisit)
class PageVisitAdmin(ReadOnlyMixin, admin.ModelAdmin):
    study_path = "participant__study"
    list_display = ("participant", "page", "entered_at", "exited_at", "views")
    list_filter = (ParticipantStudyFilter, "page")


@admin.register(Withdrawal)
class WithdrawalAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ("study", "participant_number", "by", "by_user", "page", "at")
    list_filter = (StudyFilter, "by")


@admin.register(DeletionReceipt)
class DeletionReceiptAdmin(ReadOnlyMixin, admin.ModelAdmin):
    """What the retention schedule, withdrawals and researchers deleted (studyapp/retention)."""

    list_display = ("study_slug", "data_class", "by", "by_user", "participants", "rows", "at")
    list_filter = (StudyFilter, "data_class", "by")
