"""The study configuration: one typed model (pydantic) of everything a researcher may set on a
study, so the console, the API and the services accept and refuse exactly the same things and
say so with the same words.

Before, six places each held a part of these rules (and disagreed: the console and the API
took different outcome codes and panel parameters). Now a setting's rule lives only here; the
forms and serializers call `config_validate`, the services call it again inside their
transaction, and the JSON Schema of the model drives the console's editor and the OpenAPI
document. Errors are (path, problem) pairs such as ``design[1]: unknown strategy 'proxmate'``
or ``attention_checks[0].answer: 4 is not an option (1..3)``.

Rules that need the study (which screening questions exist, whether a model file is stored)
read them from the validation context (`ConfigContext`); without one they are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    HttpUrl,
    StrictInt,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from recourse_engine import DesignError, FeatureSchema, parse_design
from recourse_engine.generated import FALLBACKS, method_settings
from studyapp import text_placeholders
from studyapp.definition import languages as language_rules
from studyapp.definition.cell_rules import eligibility_checked, quota_cells_check
from studyapp.definition.design_check_settings import DesignCheckThresholds
from studyapp.definition.errors import ConfigError, config_problems
from studyapp.definition.integrity_setting import IntegritySignals
from studyapp.definition.logic import logic_checked
from studyapp.definition.pages import PageMinimums, PageTimeouts
from studyapp.definition.questions import QUESTION_PAGES, Question, unique_keys
from studyapp.definition.release_schedule import (
    AfterDays,
    DeadlineDays,
    MaxReminders,
    ReleaseAt,
    ReleaseMode,
    ReminderDays,
    StudyKind,
    kind_problem,
    schedule_problem,
)
from studyapp.definition.retention import Retention
from studyapp.definition.wave_settings import WaveSettings, waves_problem
from studyapp.models import CODED, STUDY_LANGUAGES, default_outcome_codes, new_completion_code

#: the page texts a study may set (participant templates read these keys and no others)
TEXT_KEYS = (
    "title", "welcome", "consent", "scenario", "profile_intro", "rejection", "waiting", "plan_intro",
    "no_recourse", "completion", "screenout", "quota_full", "failed_attention", "withdrawn",
    "under_review", "released", "expired", "approved", "hypothetical",
)  # fmt: skip
LANGUAGES = tuple(code for code, _ in STUDY_LANGUAGES)
DECISION_MODELS = ("income_rule", "uploaded")
DEFAULT_DESIGN = "sparsest:1,proximate:1,random:3"

#: what a pattern means, for the message when a value does not match it
PATTERNS = {
    "code": (r"^[A-Za-z0-9_-]{1,40}$", "use 1-40 letters, digits, '-' or '_'"),
    "check_key": (
        r"^[a-z][a-z0-9_]{0,39}$",
        "use 1-40 lower-case letters, digits or '_', starting with a letter",
    ),
    "page": (r"^(profile|evaluation-[1-9][0-9]{0,2})$", "use 'profile' or 'evaluation-N' (N = 1, 2, ...)"),
    "slug": (r"^[-a-zA-Z0-9_]{1,60}$", "use 1-60 letters, digits, '-' or '_'"),
    "panel_param": (
        r"^([A-Za-z][A-Za-z0-9_.-]{0,59})?$",
        "a URL parameter name: letters, digits, '_', '.' or '-', a letter first",
    ),
}  # fmt: skip
PATTERN_HINTS = {pattern: hint for pattern, hint in PATTERNS.values()}


def _problem(kind: str, message: str, at: str = "") -> PydanticCustomError:
    """A validation error; `at` extends its path below the value (e.g. "[1]" or "[2].key")."""
    return PydanticCustomError(kind, "{problem}", {"problem": message, "at": at})


def _plain_text(value: str) -> str:
    if "\x00" in value:
        raise _problem("text", "contains a NUL character")
    if any("\ud800" <= ch <= "\udfff" for ch in value):
        raise _problem("text", "contains an unpaired surrogate character")
    return value


def _pattern(name: str) -> Any:
    return Field(pattern=PATTERNS[name][0])


_PART_PREFIX = re.compile(r"^part (?:'[^']*'|\"[^\"]*\"): ")


def design_normalise(value: str) -> str:
    """The engine's reading of a design; an error names the failing part by its index."""
    try:
        return str(parse_design(value))
    except DesignError as exc:
        at = f"[{exc.index}]" if exc.index is not None else ""  # the failing part, if one
        raise _problem("design", _PART_PREFIX.sub("", str(exc)), at) from None


def _design_or_blank(value: str) -> str:
    return design_normalise(value) if value.strip() else ""


def _url_or_blank(value: str) -> str:
    value = value.strip()
    if value:
        try:
            url = TypeAdapter(HttpUrl).validate_python(value)
        except ValidationError:
            url = None
        if url is None or url.scheme not in ("http", "https"):
            raise _problem("url", f"{value!r} is not an http(s) URL")
    return value


def _time_zone(value: str) -> str:
    value = value.strip()
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise _problem(
            "time_zone", f"{value!r} is not an IANA time zone (e.g. Asia/Tokyo, Europe/Berlin, UTC)"
        ) from None
    return value


Text = Annotated[str, AfterValidator(_plain_text)]
LongText = Annotated[Text, Field(max_length=20_000)]
ShortText = Annotated[Text, Field(min_length=1, max_length=200)]
Design = Annotated[Text, Field(max_length=500), AfterValidator(design_normalise)]


class _Strict(BaseModel):
    """Unknown keys are refused (a typo such as 'desing' must not be a silent no-op)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class PageTexts(_Strict):
    """The page texts in one language; a blank text falls back to the English one."""

    model_config = ConfigDict(str_strip_whitespace=False, title="Page texts")

    title: Annotated[Text, Field(max_length=200)] = Field(
        "",
        description="The study's name as participants read it (browser tab, e-mail subject); "
        "the internal title never reaches them. Blank: a neutral 'Study'.",
    )
    welcome: LongText = Field("", description="Welcome page, before the study starts.")
    consent: LongText = Field("", description="Consent page.")
    scenario: LongText = Field("", description="The scenario participants imagine.")
    profile_intro: LongText = Field("", description="Above the profile questions.")
    rejection: LongText = Field("", description="The rejection by the AI system.")
    waiting: LongText = Field("", description="While the recourses are prepared.")
    plan_intro: LongText = Field(
        "", description="Above each plan ({position}, {total}, {n_plans})."
    )
    no_recourse: LongText = Field("", description="When no action plan is found.")
    completion: LongText = Field("", description="Completion page.")
    screenout: LongText = Field("", description="Screened out.")
    quota_full: LongText = Field("", description="Quota full.")
    failed_attention: LongText = Field("", description="Failed attention checks.")
    withdrawn: LongText = Field("", description="After withdrawing.")
    under_review: LongText = Field("", description="Delayed release: after the profile.")
    released: LongText = Field("", description="Delayed release: the report on return.")
    expired: LongText = Field("", description="Delayed release: back after the deadline.")
    approved: LongText = Field("", description="The decision model approved the profile.")
    hypothetical: LongText = Field(
        "", description="Approved, going on: 'suppose the model had declined...'."
    )

    @model_validator(mode="after")
    def _placeholders(self) -> PageTexts:
        """A `{name}` that is no placeholder of its text is a typo ("{n_plan}"), refused."""
        for key in TEXT_KEYS:
            unknown = text_placeholders.unknown_placeholders(key, getattr(self, key))
            if unknown:
                allowed = ", ".join(f"{{{n}}}" for n in text_placeholders.allowed_in(key))
                raise _problem(
                    "placeholder",
                    f"unknown placeholder {{{unknown[0]}}} (this text may use: {allowed})",
                    f".{key}",
                )
        return self


class Texts(_Strict):
    """Page texts per language."""

    en: PageTexts = Field(default_factory=PageTexts, title="English")
    ja: PageTexts = Field(default_factory=PageTexts, title="日本語 (Japanese)")

    def stored(self) -> dict[str, dict[str, str]]:
        """As the study row keeps them: blank texts and empty languages left out."""
        out = {}
        for lang in LANGUAGES:
            texts = {k: v for k, v in getattr(self, lang).model_dump().items() if v.strip()}
            if texts:
                out[lang] = texts
        return out


class OutcomeCode(_Strict):
    model_config = ConfigDict(title="Code and return link")

    code: Annotated[Text, _pattern("code")] = Field(description="Completion code shown.")
    redirect_url: Annotated[Text, Field(max_length=500), AfterValidator(_url_or_blank)] = Field(
        "", description="Where the participant is sent back (blank: no redirect)."
    )


class OutcomeCodes(_Strict):
    """A completion code and a return link per way of leaving the study."""

    completed: OutcomeCode = Field(title="Completed")
    screened_out: OutcomeCode = Field(title="Screened out")
    quota_full: OutcomeCode = Field(title="Quota full")
    failed_attention: OutcomeCode = Field(title="Failed attention check")
    withdrew: OutcomeCode = Field(title="Withdrew")
    declined_consent: OutcomeCode = Field(title="Declined consent")
    expired: OutcomeCode = Field(title="Did not return before the deadline (delayed release)")
    approved: OutcomeCode = Field(
        default_factory=lambda: OutcomeCode(code=new_completion_code()),
        title="Approved by the decision model (the approved branch's end)",
    )
    first_session: OutcomeCode = Field(
        default_factory=lambda: OutcomeCode(code=new_completion_code()),
        title="Finished the first session (delayed release: left to wait for the plans)",
    )


assert tuple(OutcomeCodes.model_fields) == CODED


class AttentionCheck(_Strict):
    """An instructed-response item shown as an extra question on a page."""

    model_config = ConfigDict(title="Attention check")

    key: Annotated[Text, _pattern("check_key")]
    prompt: Annotated[Text, Field(min_length=1, max_length=2000)]
    options: Annotated[
        list[Annotated[Text, Field(min_length=1, max_length=500)]],
        Field(min_length=2, max_length=20),
    ]
    answer: Annotated[StrictInt, Field(ge=1, description="1-based number of the right option")]
    page: Annotated[Text, _pattern("page")]
    translations: dict[str, language_rules.AttentionTexts] = Field(
        default_factory=dict,
        exclude_if=lambda value: not value,  # stored only when there are some
        description="Other language -> prompt and options in it.",
    )

    @field_validator("translations")
    @classmethod
    def _translations(cls, value: dict, info: ValidationInfo) -> dict:
        return language_rules.attention_translations_checked(value, info.data.get("options"))

    @field_validator("answer")
    @classmethod
    def _answer_is_an_option(cls, value: int, info: ValidationInfo) -> int:
        options = info.data.get("options")
        if options is not None and value > len(options):
            raise _problem("answer", f"{value} is not an option (1..{len(options)})")
        return value


class ConditionConfig(_Strict):
    """A between-participant condition with its own design (blank: the study's)."""

    model_config = ConfigDict(title="Condition")

    name: Annotated[Text, _pattern("slug")]
    design: Annotated[Text, Field(max_length=500), AfterValidator(_design_or_blank)] = ""


class QuotaConfig(_Strict):
    """At most `limit` participants in a cell: a condition, a screening answer, or both."""

    model_config = ConfigDict(title="Quota")

    condition: Annotated[Text, Field(max_length=60)] = Field("", description="Blank: all.")
    screening_key: Annotated[Text, Field(max_length=60)] = ""
    screening_value: Annotated[Text, Field(max_length=60)] = Field(
        "", description="An option code 1..n or its label."
    )
    limit: Annotated[int, Field(ge=1, le=1_000_000_000)]

    @model_validator(mode="after")
    def _key_and_value(self) -> QuotaConfig:
        if bool(self.screening_key) != bool(self.screening_value):
            raise _problem("quota", "a screening quota needs both the question key and the value")
        return self


def _unique(items: Sequence[Any], attr: str, what: str) -> None:
    seen: set[str] = set()
    for i, item in enumerate(items):
        value = getattr(item, attr)
        if value in seen:
            raise _problem("duplicate", f"duplicate {what} {value!r}", f"[{i}].{attr}")
        seen.add(value)


class StudyConfig(_Strict):
    """Every setting of a study (the row, its eligibility rules, conditions and quotas)."""

    title: ShortText
    language: Literal["en", "ja"] = Field("en", description="The default language.")
    languages: Annotated[list[Text], Field(max_length=10)] = Field(
        default_factory=list, description="Every language participants may take the study "
        "in (link ?lang=, browser, switch on the welcome page); blank: the default only."
    )  # fmt: skip
    texts: Texts = Field(default_factory=Texts)
    consent_version: Annotated[Text, Field(min_length=1, max_length=40)] = "1"
    design: Design = Field(DEFAULT_DESIGN, description="e.g. sparsest:1,proximate:1,random:3")
    decision_model: Literal["income_rule", "uploaded"] = "income_rule"
    method_params: dict[Annotated[Text, Field(max_length=40)], dict[Text, Any]] = Field(
        default_factory=dict,
        description='Recourse method -> its settings, e.g. {"wachter": {"lam": 0.05}}; '
        'EBR/IBR take a "group" (pool column or item), causal an "scm" '
        "({child item: {parent item: weight}}).",
    )
    method_fallback: Literal[FALLBACKS] = Field(  # type: ignore[valid-type]
        "nearest_pool",
        description="When a method gives no usable counterfactual: the nearest admissible "
        "pool profile (nearest_pool) or one plan fewer (fewer); recorded either way.",
    )
    seed: Annotated[int, Field(ge=0, le=2**62)] = 0
    eligibility: dict[Text, list[int]] = Field(
        default_factory=dict,
        description="Screening question key -> eligible option codes (none: everyone).",
    )
    conditions: Annotated[list[ConditionConfig], Field(max_length=50)] = Field(default_factory=list)
    quotas: Annotated[list[QuotaConfig], Field(max_length=200)] = Field(default_factory=list)
    attention_checks: Annotated[list[AttentionCheck], Field(max_length=50)] = Field(
        default_factory=list
    )
    attention_max_failures: Annotated[int, Field(ge=0, le=50)] = 0
    attention_rule: Literal["end", "flag"] = "end"
    outcome_codes: OutcomeCodes
    panel_param: Annotated[Text, _pattern("panel_param")] = ""
    assignment_timeout_minutes: Annotated[int, Field(ge=1, le=7 * 24 * 60)] = 60
    page_order: Literal["consent_first", "screening_first"] = Field(
        "consent_first", description="consent_first: welcome, consent, screening, ...; "
        "screening_first: welcome, screening, consent (studies made before consent came first)."
    )  # fmt: skip
    questions: Annotated[list[Question], Field(max_length=100)] = Field(default_factory=list)
    random_item_order: list[Literal[QUESTION_PAGES]] = Field(  # type: ignore[valid-type]
        default_factory=list, description="Pages whose questions are shown in random order."
    )
    assignment: Literal["least_filled", "block_random"] = Field(
        "least_filled", description="least_filled, or block_random (each block of k arrivals "
        "gets every one of the k conditions once, in random order)."
    )  # fmt: skip
    waiting_timeout_s: Annotated[int, Field(ge=10, le=3600)] = Field(
        60, description="Seconds on the waiting page before the participant is told to come "
        "back later (the task is then re-queued and the case flagged)."
    )  # fmt: skip
    page_timeouts: PageTimeouts = Field(default_factory=PageTimeouts)
    page_min_seconds: PageMinimums = Field(
        default_factory=PageMinimums,
        description="Seconds a page is shown before its Continue is accepted (0: none).",
    )
    approved_branch: Literal["end", "hypothetical"] = Field(
        "end", description="When the decision model approves a profile: end (the approved "
        "outcome, with its own text, code and return link) or hypothetical (go on with "
        "'suppose the model had declined...', recorded as hypothetical per participant)."
    )  # fmt: skip
    design_check_thresholds: DesignCheckThresholds = Field(
        default_factory=DesignCheckThresholds,
        description="Where the design check warns before going live (shares 0..1).",
    )
    kind: StudyKind = Field(
        "recourse", description="recourse: profile, rejection, plans to rate; pool_collection: "
        "profile and income only (its completed answers become another study's pool)."
    )  # fmt: skip
    release_mode: ReleaseMode = Field(
        "immediate", description="immediate: plans at once (one session); delayed: released "
        "at a scheduled time, second session by link."
    )  # fmt: skip
    release_at: ReleaseAt = Field(None, description="Delayed: release everyone's plans then.")
    release_after_days: AfterDays = Field(
        None, description="Delayed: release this many days after submission."
    )
    reminder_every_days: ReminderDays = Field(
        0, description="Delayed: e-mail a reminder every this many days after release (0: none)."
    )
    max_reminders: MaxReminders = 2
    return_deadline_days: DeadlineDays = Field(
        14, description="Delayed: the second session closes this many days after release."
    )
    time_zone: Annotated[Text, Field(max_length=64), AfterValidator(_time_zone)] = Field(
        "UTC", description="IANA time zone of the times participants read (release e-mails), "
        "e.g. Asia/Tokyo; written with its UTC offset."
    )  # fmt: skip
    retention: Retention = Field(
        default_factory=Retention, description="How long each class of participants' data is "
        "kept after the participant's end or the study's close (none set: until deleted by hand)."
    )  # fmt: skip
    integrity_signals: IntegritySignals = False
    waves: WaveSettings | None = Field(None, description="multi_wave: docs/waves.md.")

    @field_validator("questions")
    @classmethod
    def _question_keys(cls, value: list[Question]) -> list[Question]:
        unique_keys(value)
        return value

    @field_validator("conditions")
    @classmethod
    def _condition_names(cls, value: list[ConditionConfig]) -> list[ConditionConfig]:
        _unique(value, "name", "condition name")
        return value

    @field_validator("attention_checks")
    @classmethod
    def _check_keys(cls, value: list[AttentionCheck]) -> list[AttentionCheck]:
        _unique(value, "key", "key")
        return value

    @field_validator("eligibility")
    @classmethod
    def _eligibility(cls, value: dict[str, list[int]], info: ValidationInfo) -> dict:
        return eligibility_checked(value, _context(info).get("screening"))

    @field_validator("decision_model")
    @classmethod
    def _model_file(cls, value: str, info: ValidationInfo) -> str:
        if value == "uploaded" and _context(info).get("has_model_blob") is False:
            raise _problem(
                "decision_model",
                "'uploaded': no model file stored; a superuser must upload the model file first",
            )
        return value

    @model_validator(mode="after")
    def _languages(self) -> StudyConfig:
        self.languages = language_rules.languages_settled(self.languages, self.language)
        return self

    @model_validator(mode="after")
    def _quota_cells(self, info: ValidationInfo) -> StudyConfig:
        names = [c.name for c in self.conditions]
        quota_cells_check(self.quotas, names, _context(info).get("screening"))
        return self

    @model_validator(mode="after")
    def _survey_logic(self, info: ValidationInfo) -> StudyConfig:
        logic_checked(self.questions, self.texts.stored(), _context(info))
        return self

    @model_validator(mode="after")
    def _kind_and_schedule(self, info: ValidationInfo) -> StudyConfig:
        problem = kind_problem(self.kind, _context(info).get("screening"))
        if problem is not None:
            raise _problem("kind", problem, "kind")
        problem_at = schedule_problem(self) or waves_problem(self)
        if problem_at is not None:
            raise _problem("release", problem_at[1], problem_at[0])
        return self

    @model_validator(mode="after")
    def _methods(self, info: ValidationInfo) -> StudyConfig:
        problem = methods_problem(self, _context(info).get("schema"))
        if problem is not None:
            raise _problem("method", problem[1], problem[0])
        return self

    def stored(self) -> dict[str, Any]:
        """JSON-ready, as the study row and the API show it."""
        data = self.model_dump()
        data["texts"] = self.texts.stored()
        data["page_timeouts"] = self.page_timeouts.stored()
        data["page_min_seconds"] = self.page_min_seconds.stored()
        return data


SETTINGS = tuple(StudyConfig.model_fields)
assert tuple(PageTexts.model_fields) == TEXT_KEYS


def methods_problem(cfg: StudyConfig, schema: FeatureSchema | None) -> tuple[str, str] | None:
    """(path, problem) for the first recourse method the study cannot use: an unknown one or
    bad settings. Whether the decision model can serve the methods is asked when the study
    goes live (`generation.method_fitting.methods_check`): a draft may name methods before
    its model is trained or uploaded."""
    for name, raw in cfg.method_params.items():
        try:
            method_settings(name, raw, schema)
        except ValueError as exc:  # the engine's MethodError
            return f"method_params.{name}", str(exc)
    designs = [("design", cfg.design)]
    designs += [(f"conditions[{i}].design", c.design) for i, c in enumerate(cfg.conditions)]
    for at, text in designs:
        for name in parse_design(text).methods if text else []:
            if name not in cfg.method_params:
                try:
                    method_settings(name, None, schema)
                except ValueError as exc:
                    return at, f"{exc} (in method_params.{name})"
    return None


def _context(info: ValidationInfo) -> Mapping[str, Any]:
    return info.context if isinstance(info.context, Mapping) else {}


def config_validate(
    data: Mapping[str, Any],
    *,
    screening: Sequence[Mapping[str, Any]] | None = None,
    has_model_blob: bool | None = None,
    schema: FeatureSchema | None = None,
    now: datetime | None = None,
    stored_release_at: datetime | None = None,
) -> StudyConfig:
    """The validated configuration, or ConfigError naming every problem by its path.

    `screening`: the schema's screening questions (eligibility and quota keys, and whether
    the study can collect a pool, are checked against them); `has_model_blob`: whether a
    model file is stored or being uploaded; `schema`: the profile items (method settings
    naming items are checked against them); `now`: the time a new release date must follow
    (`stored_release_at`, the stored one, may have passed).
    """
    context: dict[str, Any] = {
        "has_model_blob": has_model_blob,
        "schema": schema,
        "now": now,
        "stored_release_at": stored_release_at,
    }
    if screening is not None:
        context["screening"] = {q["key"]: q for q in screening}
    try:
        return StudyConfig.model_validate(dict(data), context=context)
    except ValidationError as exc:
        raise ConfigError(config_problems(exc, StudyConfig, PATTERN_HINTS)) from None


def attention_checks_read(value: Any) -> list[dict[str, Any]]:
    """Stored attention checks read back through the model (the participant pages' guard:
    a stored list the settings would refuse is never shown); ConfigError names the problem."""
    data = {**placeholders(["title", "outcome_codes"]), "attention_checks": value or []}
    return config_validate(data).stored()["attention_checks"]


def questions_read(value: Any) -> list[Question]:
    """Stored researcher-defined items read back through the model (the participant pages'
    guard, as for attention checks); ConfigError names the problem."""
    data = {**placeholders(["title", "outcome_codes"]), "questions": value or []}
    return config_validate(data).questions


def placeholders(names: Sequence[str]) -> dict[str, Any]:
    """Valid stand-ins for the named settings (their defaults; fresh outcome codes)."""
    out: dict[str, Any] = {}
    for name in names:
        field = StudyConfig.model_fields.get(name)
        if name == "outcome_codes":
            out[name] = default_outcome_codes()
        elif name == "title":
            out[name] = "-"
        elif field is not None:
            value = field.get_default(call_default_factory=True)
            out[name] = value.model_dump() if isinstance(value, BaseModel) else value
    return out


def unknown_settings(keys: Sequence[str]) -> list[tuple[str, str]]:
    """Problems for keys that are no setting at all."""
    return [
        (key, f"unknown field; expected one of: {', '.join(SETTINGS)}")
        for key in keys
        if key not in SETTINGS
    ]
