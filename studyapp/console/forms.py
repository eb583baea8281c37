"""Forms of the researcher console: study setup, the study's settings, pool upload,
duplication.

They hold no rules of their own: every setting is checked by the study configuration model
(`definition.study_config`, through `updates.study_config_check` or
`services.study_config_for_new`), so the console refuses exactly what the API refuses, with the same path-named message under
the field the path starts with. Structured settings (texts, outcome codes, attention checks,
conditions, quotas) are edited with django-jsonform's editor, driven by the model's JSON
Schema. Saving goes through the services (`StudyAdmin.save_model`, `admin_views`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django_jsonform.constants import JOIN_SYMBOL
from django_jsonform.widgets import JSONFormWidget

from studyapp.console import decision_settings, setting_choices
from studyapp.definition import study_config
from studyapp.definition.decision_model import decision_model_check
from studyapp.definition.errors import ConfigError, StudyError
from studyapp.definition.json_schema import editor_schema
from studyapp.models import STUDY_LANGUAGES, Study
from studyapp.studies import carloan, pool_collection, services, updates
from studyapp.studies.pool import MAX_POOL_BYTES

#: an uploaded schema or model larger than this is refused
MAX_SCHEMA_BYTES = 2 * 1024 * 1024
MAX_MODEL_BYTES = 64 * 1024 * 1024
#: settings edited as JSON with the structured editor
EDITED_AS_JSON = (
    "texts", "outcome_codes", "attention_checks", "conditions", "quotas", "method_params",
    "questions", "random_item_order", "page_timeouts", "design_check_thresholds", "retention",
)  # fmt: skip
#: JSON settings that are objects (the others are lists)
_JSON_OBJECTS = (
    "texts", "outcome_codes", "method_params", "page_timeouts", "design_check_thresholds",
    "retention",
)  # fmt: skip


def _read_upload(f: Any, limit: int, what: str) -> bytes:
    if f.size > limit:
        raise ValidationError(f"{what}: the file is too big ({f.size:,} bytes; at most {limit:,})")
    return f.read()


def eligibility_field(q: Mapping[str, Any]) -> str:
    return f"eligible_{q['key']}"


def add_config_errors(form: forms.Form, exc: ConfigError) -> None:
    """Each problem under the field its path starts with (the whole form when none), and
    in a structured editor also beside the input it names."""
    for (path, problem), message in zip(exc.problems, exc.messages, strict=True):
        head, _, rest = path.replace("[", ".[").partition(".")
        name = head
        if head == "eligibility" and rest:
            name = eligibility_field({"key": rest.split(".", 1)[0]})
        field = form.fields.get(name)
        form.add_error(name if field is not None else None, message)
        if field is not None and rest and isinstance(field.widget, JSONFormWidget):
            at = [part.strip("[]") for part in rest.split(".")]
            if "design" in at:  # a design is one text box: its part index stays in the message
                at = at[: at.index("design") + 1]
            field.widget.add_error({JOIN_SYMBOL.join(at): problem})


class StudySetupForm(forms.Form):
    """The "Add study" page: a schema (built in or uploaded), a pool (synthetic or a CSV)."""

    slug = forms.SlugField(max_length=50, help_text="Short id used in links and exports.")
    title = forms.CharField(max_length=200)
    language = forms.ChoiceField(choices=STUDY_LANGUAGES, initial="en")
    schema_source = forms.ChoiceField(
        choices=[("builtin", "Built-in car-loan schema (with its texts)"), ("upload", "Upload")],
        initial="builtin",
        widget=forms.RadioSelect,
    )
    schema_file = forms.FileField(required=False, help_text="Feature schema (JSON).")
    design = forms.CharField(
        max_length=500,
        required=False,
        help_text="e.g. sparsest:1,proximate:1,random:3 or ebr:1,random:4; blank: the schema's.",
    )
    pool_file = forms.FileField(
        required=False,
        help_text="Pool CSV (id, income, one column per item). Blank: a synthetic pool.",
    )
    pool_size = forms.IntegerField(
        min_value=10, max_value=200_000, initial=3683, help_text="Size of the synthetic pool."
    )
    seed = forms.IntegerField(min_value=0, initial=0, help_text="Base seed of recourse picks.")
    pool_collection = forms.BooleanField(
        required=False,
        label="Pool-collection survey",
        help_text="Participants answer the schema's profile items, age, gender and the survey's "
        "21-answer income item (with 'prefer not to say'), nothing about recourse; the "
        "completed answers can become another study's pool.",
    )

    def clean_slug(self) -> str:
        try:
            return services.slug_check(self.cleaned_data["slug"])
        except StudyError as exc:
            raise ValidationError(str(exc)) from None

    def apply_kind(self, study: Study) -> Study:
        """After the study is created: make it a pool-collection survey when asked."""
        if self.cleaned_data.get("pool_collection"):
            return pool_collection.study_make_pool_collection(study=study)
        return study

    def _schema(self, data: dict[str, Any]) -> dict[str, Any] | None:
        if data.get("schema_source") != "upload":
            return carloan.carloan_schema_dict()
        f = data.get("schema_file")
        if f is None:
            self.add_error("schema_file", "choose a schema JSON file, or the built-in one")
            return None
        try:
            raw = json.loads(_read_upload(f, MAX_SCHEMA_BYTES, "schema").decode("utf-8-sig"))
        except ValidationError as exc:
            self.add_error("schema_file", exc)
            return None
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            self.add_error("schema_file", f"schema: not a JSON file ({exc})")
            return None
        if not isinstance(raw, dict):
            self.add_error("schema_file", "schema: expected a JSON object")
            return None
        return raw

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        schema = self._schema(data)
        data["schema"] = schema if data.get("schema_source") == "upload" else None
        if data.get("pool_collection") and schema is not None:
            schema = data["schema"] = pool_collection.collection_schema(schema)
        data["settings"] = {k: data[k] for k in ("language", "seed") if data.get(k) is not None}
        if data.get("design"):
            data["settings"]["design"] = data["design"]
        if schema is not None:
            try:
                fs = services.schema_of(schema)
                services.study_config_for_new(
                    schema=fs, settings={"title": data.get("title", ""), **data["settings"]}
                )
            except ConfigError as exc:
                add_config_errors(self, exc)
            except StudyError as exc:
                self.add_error("schema_file", str(exc))
        pool = data.get("pool_file")
        data["pool"] = None
        if pool is not None:
            try:
                data["pool"] = _read_upload(pool, MAX_POOL_BYTES, "pool")
            except ValidationError as exc:
                self.add_error("pool_file", exc)
        return data


class PoolUploadForm(forms.Form):
    file = forms.FileField(label="Pool CSV", help_text="id, income and one column per item.")


class DuplicateForm(forms.Form):
    slug = forms.SlugField(max_length=50, help_text="Slug of the copy (a new draft study).")

    def clean_slug(self) -> str:
        try:
            return services.slug_check(self.cleaned_data["slug"])
        except StudyError as exc:
            raise ValidationError(str(exc)) from None


def _json_field(name: str, help_text: str) -> forms.JSONField:
    return forms.JSONField(
        required=False,
        widget=JSONFormWidget(schema=editor_schema(name)),
        help_text=help_text,
    )


class StudyChangeForm(forms.ModelForm):
    """The study's settings in the admin; eligibility fields are added per screening question
    by `StudyAdmin.get_form`. `changes` (after validation) is what `updates.study_update`
    is given."""

    texts = _json_field("texts", "Per language; a blank text falls back to the English one.")
    languages = forms.MultipleChoiceField(
        choices=STUDY_LANGUAGES,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Every language participants may take the study in (with the default); "
        "going live needs every text in each. None ticked: the default only.",
    )
    outcome_codes = _json_field("outcome_codes", "A completion code and return link per outcome.")
    attention_checks = _json_field("attention_checks", "Instructed-response items.")
    conditions = _json_field(
        "conditions", "Between-participant conditions (blank design: the study's)."
    )
    quotas = _json_field("quotas", "Cells: a condition, a screening answer (code or label), both.")
    questions = _json_field(
        "questions",
        "Your own items: Likert, single or multiple choice, text, number, slider, attention "
        "check; on a questionnaire before the scenario (pre), after the evaluations (post), or "
        "on every plan's page (evaluation). Exported as the column q_[key], with a codebook entry.",
    )
    random_item_order = _json_field(
        "random_item_order", "Pages whose items are shown in a random order (recorded)."
    )
    page_timeouts = _json_field(
        "page_timeouts", "Seconds before a page submits itself with what was entered."
    )
    design_check_thresholds = _json_field(
        "design_check_thresholds",
        "Where the design check warns before going live: the decision model approving more "
        "than this share of sampled profiles, a method's own plan shown to fewer than this "
        "share of rejected ones (0..1; defaults 0.10 and 0.80).",
    )
    retention = _json_field(
        "retention",
        "How long each class of participants' data is kept after the participant's end or the "
        "study's close (blank days: until deleted by hand); receipts on the Data protection page.",
    )
    method_params = forms.JSONField(
        required=False,
        help_text='Settings of the recourse methods the design names, e.g. {"wachter": '
        '{"lam": 0.05}, "causal": {"scm": {"position": {"education": 0.5}}}}.',
    )
    decision_model = forms.ChoiceField(
        choices=[(m, m) for m in study_config.DECISION_MODELS],
        required=False,
        help_text="income_rule: the reference study's bank rule; uploaded: a stored model "
        "(trained on the pool or uploaded on the 'Decision model' page, or the file below).",
    )
    approved_branch = decision_settings.branch_field()
    page_min_seconds = decision_settings.minimum_field()
    model_file = forms.FileField(
        required=False,
        label="Trained model file",
        help_text="Saved with recourse_engine.save_model on this study's schema (superusers only: "
        "model files are unpickled).",
    )

    class Meta:
        model = Study
        fields = "__all__"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "shared_with" in self.fields:
            users = get_user_model().objects.filter(is_staff=True, is_active=True)
            if self.instance.owner_id:
                users = users.exclude(pk=self.instance.owner_id)
            self.fields["shared_with"].queryset = users.order_by("username")
        current = updates.study_config(self.instance) if self.instance.pk else {}
        for name in ("conditions", "quotas", "decision_model"):
            if name in self.fields and name in current:
                self.fields[name].initial = current[name]
        if current:  # over the model form's initial (the stored JSON, not the seconds)
            self.initial.update(decision_settings.initial(current))
        for name in setting_choices.PER_STUDY:  # a condition or page chosen, not typed
            if name in self.fields and current:
                self.fields[name].widget.schema = setting_choices.study_editor_schema(
                    name, current, self.instance.schema
                )
        self.changes: dict[str, Any] = {}

    def _changes(self, data: Mapping[str, Any]) -> dict[str, Any]:
        changes = decision_settings.changes(self, data)
        for name in study_config.SETTINGS:
            if name in decision_settings.NAMES:
                continue
            if name in self.fields and name in data:
                value = data[name]
                if value is None and name in EDITED_AS_JSON:
                    value = {} if name in _JSON_OBJECTS else []
                changes[name] = value
        questions = updates.questions_of(self.instance.schema or {})
        boxes = {q["key"]: eligibility_field(q) for q in questions if q["type"] != "integer"}
        if any(field in self.fields for field in boxes.values()):
            changes["eligibility"] = {
                key: [int(c) for c in data.get(field) or []]
                for key, field in boxes.items()
                if field in self.fields
            }
        if not changes.get("decision_model") and "decision_model" in changes:
            del changes["decision_model"]
        return changes

    def _model_blob(self, data: dict[str, Any]) -> None:
        upload = data.get("model_file")
        if upload is None:
            return
        if data.get("decision_model") != "uploaded":
            self.add_error("model_file", "choose decision model 'uploaded' to use this file")
            return
        try:
            data["model_blob"] = _read_upload(upload, MAX_MODEL_BYTES, "decision model")
            decision_model_check(study=self.instance, blob=data["model_blob"])
        except ValidationError as exc:
            self.add_error("model_file", exc)
        except StudyError as exc:
            self.add_error("model_file", str(exc))

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        self._model_blob(data)
        self.changes = self._changes(data)
        try:
            updates.study_config_check(
                study=self.instance, changes=self.changes, model_blob=data.get("model_blob")
            )
        except ConfigError as exc:
            add_config_errors(self, exc)
        return data
