"""Forms of the researcher console: study setup, the study's settings, pool upload,
duplication. They validate every field with the same rules as the services and the API
(`study_setup`, the engine's design grammar, `attention.validate_checks`) and name the
problem; saving goes through `study_setup`/`services`."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator

from recourse_engine import DesignError
from studyapp.generation import engine
from studyapp.models import OUTCOMES, STUDY_LANGUAGES, Condition, Quota, Study
from studyapp.participation import screening
from studyapp.studies import study_setup
from studyapp.studies.services import StudyError

#: an uploaded schema or model larger than this is refused
MAX_SCHEMA_BYTES = 2 * 1024 * 1024
MAX_MODEL_BYTES = 64 * 1024 * 1024
_PANEL_PARAM = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,59}$")
_LANGS = {code for code, _ in STUDY_LANGUAGES}


def _design(value: str) -> str:
    try:
        return str(engine.design_of(value))
    except DesignError as exc:
        raise ValidationError(f"design: {exc}") from None


def _read_upload(f: Any, limit: int, what: str) -> bytes:
    if f.size > limit:
        raise ValidationError(f"{what}: the file is too big ({f.size:,} bytes; at most {limit:,})")
    return f.read()


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

    def clean_slug(self) -> str:
        slug = self.cleaned_data["slug"]
        if Study.objects.filter(slug=slug).exists():
            raise ValidationError(f"a study with the slug {slug!r} exists already")
        return slug

    def clean_design(self) -> str:
        value = self.cleaned_data.get("design", "").strip()
        return _design(value) if value else ""

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        data["schema"] = None
        if data.get("schema_source") == "upload":
            f = data.get("schema_file")
            if f is None:
                self.add_error("schema_file", "choose a schema JSON file, or the built-in one")
                return data
            try:
                raw = json.loads(_read_upload(f, MAX_SCHEMA_BYTES, "schema").decode("utf-8-sig"))
            except ValidationError as exc:
                self.add_error("schema_file", exc)
                return data
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                self.add_error("schema_file", f"schema: not a JSON file ({exc})")
                return data
            try:
                data["schema"] = engine.schema_of(raw).to_dict() if isinstance(raw, dict) else raw
                screening.questions(data["schema"])
            except (ValueError, screening.ScreeningError) as exc:
                self.add_error("schema_file", f"schema: {exc}")
        pool = data.get("pool_file")
        data["pool"] = None
        if pool is not None:
            try:
                data["pool"] = _read_upload(pool, study_setup.MAX_POOL_BYTES, "pool")
            except ValidationError as exc:
                self.add_error("pool_file", exc)
        return data


class PoolUploadForm(forms.Form):
    file = forms.FileField(label="Pool CSV", help_text="id, income and one column per item.")


class DuplicateForm(forms.Form):
    slug = forms.SlugField(max_length=50, help_text="Slug of the copy (a new draft study).")

    def clean_slug(self) -> str:
        slug = self.cleaned_data["slug"]
        if Study.objects.filter(slug=slug).exists():
            raise ValidationError(f"a study with the slug {slug!r} exists already")
        return slug


def eligibility_field(q: Mapping[str, Any]) -> str:
    return f"eligible_{q['key']}"


class StudyChangeForm(forms.ModelForm):
    """The study's settings in the admin; eligibility fields are added per screening question
    by `StudyAdmin.get_form`."""

    decision_model = forms.ChoiceField(
        choices=[(m, m) for m in engine.DECISION_MODELS],
        required=False,
        help_text="income_rule: the reference study's bank rule; uploaded: the model file below.",
    )
    model_file = forms.FileField(
        required=False,
        label="Trained model file",
        help_text="Saved with recourse_engine.save_model on this study's schema (superusers only: "
        "model files are unpickled).",
    )

    class Meta:
        model = Study
        fields = "__all__"
        widgets = {
            "texts": forms.Textarea(attrs={"rows": 14, "cols": 100}),
            "outcome_codes": forms.Textarea(attrs={"rows": 8, "cols": 100}),
            "attention_checks": forms.Textarea(attrs={"rows": 6, "cols": 100}),
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "shared_with" in self.fields:
            users = get_user_model().objects.filter(is_staff=True, is_active=True)
            if self.instance.owner_id:
                users = users.exclude(pk=self.instance.owner_id)
            self.fields["shared_with"].queryset = users.order_by("username")
        if "decision_model" in self.fields:
            self.fields["decision_model"].initial = self.instance.decision_model

    def clean_design(self) -> str:
        return _design(self.cleaned_data["design"])

    def clean_texts(self) -> dict[str, dict[str, str]]:
        texts = self.cleaned_data["texts"]
        if not isinstance(texts, dict):
            raise ValidationError('texts: expected {"en": {"consent": "...", ...}, "ja": {...}}')
        for lang, page_texts in texts.items():
            if lang not in _LANGS:
                raise ValidationError(f"texts: unknown language {lang!r} (en or ja)")
            if not isinstance(page_texts, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in page_texts.items()
            ):
                raise ValidationError(f"texts[{lang!r}]: expected an object of text key -> text")
        return texts

    def clean_outcome_codes(self) -> dict[str, dict[str, str]]:
        codes = self.cleaned_data["outcome_codes"]
        if not isinstance(codes, dict):
            raise ValidationError(
                "outcome codes: expected an object outcome -> {code, redirect_url}"
            )
        unknown = sorted(set(codes) - set(OUTCOMES))
        if unknown:
            raise ValidationError(f"outcome codes: unknown outcome(s) {', '.join(unknown)}")
        missing = [o for o in OUTCOMES if o not in codes]
        if missing:
            raise ValidationError(f"outcome codes: missing {', '.join(missing)}")
        url = URLValidator(schemes=["http", "https"])
        out = {}
        for outcome in OUTCOMES:
            entry = codes[outcome]
            if not isinstance(entry, dict) or set(entry) - {"code", "redirect_url"}:
                raise ValidationError(
                    f"outcome codes[{outcome!r}]: expected {{code, redirect_url}}"
                )
            code = str(entry.get("code", "")).strip()
            if not code or len(code) > 40:
                raise ValidationError(f"outcome codes[{outcome!r}]: code must be 1-40 characters")
            redirect = str(entry.get("redirect_url", "")).strip()
            if redirect:
                try:
                    url(redirect)
                except ValidationError:
                    raise ValidationError(
                        f"outcome codes[{outcome!r}]: redirect_url {redirect!r} is not an "
                        "http(s) URL"
                    ) from None
            out[outcome] = {"code": code, "redirect_url": redirect}
        return out

    def clean_attention_checks(self) -> list[dict[str, Any]]:
        try:
            return study_setup.clean_attention_checks(self.cleaned_data["attention_checks"])
        except StudyError as exc:
            raise ValidationError(str(exc)) from None

    def clean_panel_param(self) -> str:
        value = self.cleaned_data["panel_param"].strip()
        if value and not _PANEL_PARAM.match(value):
            raise ValidationError(
                "panel parameter: a URL parameter name (letters, digits, '_'; a letter first)"
            )
        return value

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        name = data.get("decision_model")
        upload = data.get("model_file")
        if "decision_model" not in self.fields:
            return data
        if upload is not None:
            if name != "uploaded":
                self.add_error("model_file", "choose decision model 'uploaded' to use this file")
                return data
            try:
                data["model_blob"] = _read_upload(upload, MAX_MODEL_BYTES, "decision model")
                study_setup.decision_model_check(study=self.instance, blob=data["model_blob"])
            except (ValidationError, StudyError) as exc:
                self.add_error(
                    "model_file", str(exc.messages[0] if hasattr(exc, "messages") else exc)
                )
        elif name == "uploaded" and not self.instance.decision_model_blob:
            if "model_file" in self.fields:
                self.add_error("model_file", "decision model 'uploaded': upload the model file")
            else:  # researchers who may not upload (see StudyAdmin.get_form)
                self.add_error(
                    "decision_model",
                    "decision model 'uploaded': no model file stored; a superuser must upload "
                    "the model file first",
                )
        return data


class ConditionForm(forms.ModelForm):
    class Meta:
        model = Condition
        fields = ("name", "design", "position")

    def clean_design(self) -> str:
        value = self.cleaned_data["design"].strip()
        return _design(value) if value else ""


class QuotaForm(forms.ModelForm):
    class Meta:
        model = Quota
        fields = ("condition", "screening_key", "screening_value", "limit")

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        study = getattr(self.instance, "study", None) if self.instance.study_id else None
        study = study or getattr(self, "study", None)
        key, value = data.get("screening_key", ""), data.get("screening_value", "")
        if bool(key) != bool(value):
            raise ValidationError("a screening quota needs both the question key and the value")
        if key and study is not None:
            qs = {q["key"]: q for q in screening.questions(study.schema)}
            if key not in qs:
                raise ValidationError(
                    f"screening key {key!r}: not a screening question ({', '.join(qs)})"
                )
            options = [str(o) for o in qs[key].get("options", [])]
            codes = [str(i) for i in range(1, len(options) + 1)]
            if options and value not in codes and value not in options:
                raise ValidationError(
                    f"screening value {value!r} for {key!r}: an option code 1..{len(options)} "
                    "or its label"
                )
        if data.get("limit") == 0:
            raise ValidationError("limit: at least 1")
        return data
