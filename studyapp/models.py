"""Tables of a study: the study itself, its participants, their profiles, recourses,
evaluations and page-visit paradata.

Models hold data and integrity rules (constraints), not behaviour: writes go through
`services.py`, reads through `selectors.py` (HackSoft's split).
"""

from __future__ import annotations

import secrets
from functools import cached_property

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from studyapp import text_placeholders
from studyapp.integrity_models import StudyIntegrity
from studyapp.model_fields import user_link
from studyapp.release_models import ParticipantRelease, StudyKindAndRelease
from studyapp.retention_models import StudyRetention
from studyapp.versioned import Versioned

#: languages a study can run in (participant pages and the car-loan texts exist in both)
STUDY_LANGUAGES = (("en", "English"), ("ja", "日本語 (Japanese)"))

#: how a participant can leave a study; each outcome has its own completion code and redirect
OUTCOMES = (
    "completed", "screened_out", "quota_full", "failed_attention", "withdrew", "declined_consent",
    "expired", "approved",
)  # fmt: skip
#: what happens when the decision model approves a participant's profile: the study ends for
#: them with the approved outcome, or they go on under a clearly worded hypothetical rejection
APPROVED_BRANCHES = (
    ("end", "End with the approved outcome (its own text, code and return link)"),
    ("hypothetical", "Go on: 'suppose the model had declined', recorded as hypothetical"),
)
#: codes given before the end, beside the outcomes' own: a delayed-release study's first
#: session ends with the participant leaving to wait, and the panel pays for it too
SESSION_CODES = ("first_session",)
#: every code (and return link) a study gives: one per outcome, one per earlier session
CODED = (*OUTCOMES, *SESSION_CODES)
#: page orders a study can have: consent first (new studies), or screening first (studies
#: made before consent came first keep it)
PAGE_ORDERS = (
    ("consent_first", "Welcome, consent, screening, ..."),
    (
        "screening_first",
        "Welcome, screening, consent, ... (studies made before consent came first)",
    ),
)
#: how newcomers are assigned to conditions
ASSIGNMENTS = (
    ("least_filled", "Least-filled condition (ties: position, then name)"),
    ("block_random", "Block-randomised (each block of k arrivals: every condition once, shuffled)"),
)


def new_access_code() -> str:
    """128 random bits, URL-safe: the participant's only credential, so it must be unguessable."""
    return secrets.token_urlsafe(16)


def new_completion_code() -> str:
    return secrets.token_hex(4).upper()


def default_outcome_codes() -> dict[str, dict[str, str]]:
    """A distinct random code per outcome (and earlier session), no redirect: researchers
    paste their panel's."""
    return {o: {"code": new_completion_code(), "redirect_url": ""} for o in CODED}


class Study(Versioned, StudyKindAndRelease, StudyRetention, StudyIntegrity, models.Model):
    class State(models.TextChoices):
        DRAFT = "draft", "Draft"
        LIVE = "live", "Live"
        CLOSED = "closed", "Closed"

    class AttentionRule(models.TextChoices):
        END = "end", "End the study (failed-attention outcome)"
        FLAG = "flag", "Let them finish; mark excluded in the export"

    slug = models.SlugField(unique=True, help_text="Short id used in links and exports.")
    title = models.CharField(max_length=200)
    state = models.CharField(max_length=10, choices=State.choices, default=State.DRAFT)
    owner = user_link("owned_studies")
    shared_with = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="shared_studies"
    )
    language = models.CharField(
        max_length=8, choices=STUDY_LANGUAGES, default="en", help_text="The default language."
    )
    languages = models.JSONField(
        default=list, blank=True, help_text="Every language of the study, the default first."
    )
    schema = models.JSONField(help_text="Feature schema (profile items, screening, evaluation).")
    schema_hash = models.CharField(max_length=32)
    texts = models.JSONField(
        default=dict, help_text="Language -> {text key (consent, scenario, ...) -> text}."
    )
    consent_version = models.CharField(max_length=40, default="1")
    design = models.CharField(max_length=500, help_text="e.g. sparsest:1,proximate:1,random:3")
    decision_model = models.CharField(max_length=100, default="income_rule")
    pool_csv = models.TextField(help_text="The counterfactual pool as CSV (id, income, items).")
    pool_hash = models.CharField(max_length=64)
    pool_rows = models.PositiveIntegerField(default=0)
    decision_model_blob = models.BinaryField(
        null=True, blank=True, help_text="An uploaded trained model (recourse_engine format)."
    )
    decision_model_info = models.JSONField(
        default=dict,
        blank=True,
        help_text="The stored model's card: kind, features, label rule, when it was trained or "
        "uploaded, sha256, approval rate on the pool, coefficients (linear models).",
    )
    time_zone = models.CharField(
        max_length=64, default="UTC", help_text="IANA time zone of the times participants read."
    )
    seed = models.BigIntegerField(default=0, help_text="Base seed of recourse selection.")
    method_params = models.JSONField(
        default=dict,
        blank=True,
        help_text="Recourse method -> its settings (parameters; EBR/IBR's group; causal's scm).",
    )
    method_fallback = models.CharField(
        max_length=20,
        choices=[("nearest_pool", "nearest admissible pool profile"), ("fewer", "one plan fewer")],
        default="nearest_pool",
        help_text="What a participant sees when a method gives no usable counterfactual.",
    )
    outcome_codes = models.JSONField(
        default=default_outcome_codes,
        help_text="Outcome -> {code, redirect_url}: " + ", ".join(CODED) + ".",
    )
    panel_param = models.CharField(
        max_length=60, blank=True, default="", help_text="Extra URL parameter with a panel id."
    )
    assignment_timeout_minutes = models.PositiveIntegerField(
        default=60, help_text="In-progress participants younger than this count as filling."
    )
    attention_checks = models.JSONField(
        default=list, blank=True, help_text="Instructed-response items (see docs/studyapp.md)."
    )
    attention_max_failures = models.PositiveSmallIntegerField(
        default=0, help_text="Failures allowed before the exclusion rule applies."
    )
    attention_rule = models.CharField(
        max_length=10, choices=AttentionRule.choices, default=AttentionRule.END
    )
    page_order = models.CharField(max_length=20, choices=PAGE_ORDERS, default="consent_first")
    questions = models.JSONField(
        default=list, blank=True, help_text="Researcher-defined items (studies/questions.py)."
    )
    random_item_order = models.JSONField(
        default=list, blank=True, help_text="Pages whose researcher items are shuffled."
    )
    assignment = models.CharField(max_length=20, choices=ASSIGNMENTS, default="least_filled")
    waiting_timeout_s = models.PositiveIntegerField(
        default=60, help_text="Seconds on the waiting page before the time-out message."
    )
    page_timeouts = models.JSONField(
        default=dict, blank=True, help_text="Page type -> seconds before it submits itself."
    )
    design_check_thresholds = models.JSONField(
        default=dict,
        blank=True,
        help_text="Where the design check warns: approval_rate_above, own_plan_rate_below.",
    )
    approved_branch = models.CharField(
        max_length=20, choices=APPROVED_BRANCHES, default="end",
        help_text="When the decision model approves a profile.",
    )  # fmt: skip
    page_min_seconds = models.JSONField(
        default=dict, blank=True, help_text="Page -> seconds before its Continue is accepted."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "studies"

    def __str__(self) -> str:
        return f"{self.slug} ({self.state})"

    @property
    def page_texts(self) -> dict[str, str]:
        """Texts in the study's default language (`page_texts_in`)."""
        return self.page_texts_in(self.language)

    def page_texts_in(self, language: str) -> dict[str, str]:
        """Texts in `language` as written, falling back key by key to the study's default
        language, then English (a draft may lack some; going live refuses that)."""
        texts = self.texts or {}
        return {**texts.get("en", {}), **texts.get(self.language, {}), **texts.get(language, {})}

    def texts_for(self, design: str = "", language: str = "") -> dict[str, str]:
        """The page texts in `language` (blank: the default) with their placeholders filled
        from `design` (blank: the study's)."""
        values = text_placeholders.design_values(design or self.design)
        texts = self.page_texts_in(language or self.language)
        return {k: text_placeholders.fill(str(v), values) for k, v in texts.items()}


class Condition(models.Model):
    """A between-participant condition: its own design (e.g. distance-selected vs. balanced)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="conditions")
    name = models.SlugField(max_length=60)
    design = models.CharField(
        max_length=500, blank=True, default="", help_text="Blank: the study's design."
    )
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["study", "position", "name"]
        constraints = [
            models.UniqueConstraint(fields=["study", "name"], name="condition_unique_name")
        ]

    def __str__(self) -> str:
        return f"{self.study.slug}/{self.name}"


class Quota(models.Model):
    """At most `limit` participants (completes plus fresh in-progress) in a cell.

    The cell is a condition, a screening answer (e.g. gender = 2), or both; blank parts
    match everyone.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="quotas")
    condition = models.ForeignKey(
        Condition, null=True, blank=True, on_delete=models.CASCADE, related_name="quotas"
    )
    screening_key = models.CharField(max_length=60, blank=True, default="")
    screening_value = models.CharField(max_length=60, blank=True, default="")
    limit = models.PositiveIntegerField()

    def __str__(self) -> str:
        cell = [self.condition.name if self.condition else "", self.screening_key]
        return f"{self.study.slug} quota {'/'.join(c for c in cell if c) or 'all'} <= {self.limit}"


class Participant(ParticipantRelease, models.Model):
    class State(models.TextChoices):
        SCREENING = "screening", "Screening"
        CONSENT = "consent", "Consent"
        QUESTIONS_PRE = "questions_pre", "Questionnaire before the scenario"
        SCENARIO = "scenario", "Scenario"
        PROFILE = "profile", "Profile"
        DECISION = "decision", "The model's decision (rejection page)"
        WAITING = "waiting", "Waiting for recourses"
        EVALUATING = "evaluating", "Evaluating"
        QUESTIONS_POST = "questions_post", "Questionnaire after the evaluations"
        COMPLETED = "completed", "Completed"
        SCREENED_OUT = "screened_out", "Screened out"
        NO_RECOURSE = "no_recourse", "No admissible recourse"
        QUOTA_FULL = "quota_full", "Quota full"
        FAILED_ATTENTION = "failed_attention", "Failed attention check"
        WITHDRAWN = "withdrawn", "Withdrew"
        DECLINED = "declined", "Declined consent"
        EXPIRED = "expired", "Did not return before the deadline (delayed release)"
        APPROVED = "approved", "The decision model approved the profile"
        WAVE_FOLLOW = "wave_follow", "Multi-wave: which plan they will follow"
        WAVE_AWAY = "wave_away", "Multi-wave: acting on their plan until the next wave"
        WAVE_CHANGES = "wave_changes", "Multi-wave: back, reporting what they changed"

    class Device(models.TextChoices):
        PHONE = "phone", "Phone"
        TABLET = "tablet", "Tablet"
        DESKTOP = "desktop", "Desktop or laptop"

    class Generation(models.TextChoices):
        NONE = "", "Not requested"
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        EMPTY = "empty", "No admissible recourse"
        FAILED = "failed", "Failed"

    study = models.ForeignKey(Study, on_delete=models.PROTECT, related_name="participants")
    code = models.CharField(max_length=40, unique=True, default=new_access_code)
    condition = models.CharField(max_length=60, blank=True, default="")
    assignment = models.CharField(
        max_length=40, blank=True, default="", help_text="How the condition was assigned."
    )
    is_test = models.BooleanField(
        default=False, help_text="Preview or bot: left out of quotas, monitor, export."
    )
    preview_skip_delay = models.BooleanField(
        default=False, help_text="A preview of a delayed study that shows the plans at once."
    )
    state = models.CharField(max_length=20, choices=State.choices, default=State.SCREENING)
    recruitment_id = models.CharField(
        max_length=100, blank=True, default="", help_text="Panel id (e.g. PROLIFIC_PID)."
    )
    panel = models.JSONField(
        default=dict, blank=True, help_text="Other panel parameters (STUDY_ID, SESSION_ID)."
    )
    attention = models.JSONField(default=dict, blank=True, help_text="Check key -> answer.")
    attention_failures = models.PositiveSmallIntegerField(default=0)
    answers = models.JSONField(default=dict, blank=True, help_text="Questionnaire item -> answer.")
    item_orders = models.JSONField(default=dict, blank=True, help_text="Page -> items as shown.")
    screening = models.JSONField(default=dict, blank=True)
    age = models.PositiveSmallIntegerField(null=True, blank=True)
    gender = models.CharField(max_length=40, blank=True, default="")
    income_band = models.CharField(max_length=40, blank=True, default="")
    income_jpy = models.FloatField(null=True, blank=True)
    consent_version = models.CharField(max_length=40, blank=True, default="")
    language = models.CharField(
        max_length=8, blank=True, default="", help_text="The participant's (blank: the study's)."
    )
    consented_at = models.DateTimeField(null=True, blank=True)
    completion_code = models.CharField(max_length=40, blank=True, default="")
    selection_seed = models.BigIntegerField(null=True, blank=True)
    generation = models.CharField(
        max_length=10, choices=Generation.choices, blank=True, default=Generation.NONE
    )
    generation_queued_at = models.DateTimeField(null=True, blank=True)
    generation_started_at = models.DateTimeField(null=True, blank=True)
    generation_finished_at = models.DateTimeField(null=True, blank=True)
    generation_attempts = models.PositiveSmallIntegerField(default=0)
    generation_error = models.TextField(blank=True, default="")
    wait_timeouts = models.PositiveSmallIntegerField(
        default=0, help_text="Times the waiting page timed out (each re-queues a stuck task)."
    )
    requeued_at = models.DateTimeField(null=True, blank=True)
    flagged = models.BooleanField(default=False)
    flag_reason = models.CharField(max_length=300, blank=True, default="")
    # the device the participant arrived on, as the welcome page's script measured it (an
    # analyst's covariates; blank where the browser ran no script)
    device_class = models.CharField(
        max_length=10, choices=Device.choices, blank=True, default="", help_text="At arrival."
    )
    viewport_width = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Browser window's width at arrival (CSS px)."
    )
    viewport_height = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Browser window's height at arrival (CSS px)."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["study", "state"]),
            models.Index(fields=["study", "condition", "state"]),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "recruitment_id"],
                condition=~models.Q(recruitment_id=""),
                name="participant_unique_panel_id",
            )
        ]

    def __str__(self) -> str:
        return f"P{self.pk} ({self.state})"

    @property
    def page_language(self) -> str:
        """The language of every page, e-mail and end page of this participant."""
        return self.language or self.study.language

    @cached_property
    def page_texts(self) -> dict[str, str]:
        """The study's page texts in the participant's language, with placeholders filled
        from their design (their condition's when it has its own)."""
        texts = self.study.page_texts_in(self.page_language)
        if not text_placeholders.names_design(texts):
            return texts  # nothing to fill: no need to look the condition up
        design = ""
        if self.condition:
            design = (
                Condition.objects.filter(study_id=self.study_id, name=self.condition)
                .values_list("design", flat=True)
                .first()
            ) or ""
        return self.study.texts_for(design.strip(), self.page_language)


class Profile(models.Model):
    participant = models.OneToOneField(Participant, on_delete=models.CASCADE)
    values = models.JSONField(help_text="Item key -> option code.")
    decision = models.CharField(max_length=20, default="rejected")
    submitted_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"profile of P{self.participant_id}"


class Recourse(models.Model):
    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="recourses")
    position = models.PositiveSmallIntegerField(help_text="Display order 1..k (randomised).")
    strategy = models.CharField(max_length=100)
    method = models.CharField(max_length=60, default="pool_search")
    pool_index = models.PositiveIntegerField(
        null=True, blank=True, help_text="Pool row shown (empty for a generated profile)."
    )
    pool_id = models.CharField(max_length=100, blank=True)
    values = models.JSONField(help_text="Counterfactual: item key -> option code.")
    changed = models.JSONField(default=list)
    sparsity = models.PositiveSmallIntegerField()
    proximity = models.FloatField()
    origin = models.CharField(
        max_length=20,
        choices=[("pool", "pool"), ("generated", "generated")],
        default="pool",
        help_text="Where the counterfactual comes from: a pool profile, or generated by a method.",
    )
    sparsity_rank = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Rank in sparsity among the admissible pool candidates (1 = minimal); "
        "empty for recourses stored before ranks were recorded.",
    )
    proximity_rank = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Rank in proximity among the admissible pool candidates (1 = minimal); "
        "empty for recourses stored before ranks were recorded.",
    )
    method_params = models.JSONField(
        default=dict, blank=True, help_text="The generating method's parameters (all of them)."
    )
    fit_version = models.CharField(
        max_length=80, blank=True, default="", help_text="The stored fit that generated it."
    )
    fallback = models.CharField(
        max_length=300,
        blank=True,
        default="",
        help_text="Why the method's own counterfactual is not shown (empty: it is, or a pool pick).",
    )
    generation_seconds = models.FloatField(default=0.0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["participant", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["participant", "position"], name="recourse_unique_position"
            )
        ]

    def __str__(self) -> str:
        return f"P{self.participant_id} #{self.position} ({self.strategy})"


class Evaluation(models.Model):
    SCALE = (MinValueValidator(1), MaxValueValidator(7))

    recourse = models.OneToOneField(Recourse, on_delete=models.CASCADE, related_name="evaluation")
    participant = models.ForeignKey(
        Participant, on_delete=models.CASCADE, related_name="evaluations"
    )
    acceptance = models.PositiveSmallIntegerField(validators=SCALE)
    acceptance_why = models.TextField(blank=True, default="")
    impossible = models.JSONField(default=list, help_text="Changed items marked impossible.")
    action = models.PositiveSmallIntegerField(validators=SCALE)
    action_why = models.TextField(blank=True, default="")
    answers = models.JSONField(default=dict, blank=True, help_text="Researcher item -> answer.")
    item_order = models.JSONField(default=list, blank=True, help_text="Researcher items as shown.")
    seconds_on_page = models.FloatField(null=True, help_text="Empty once paradata are deleted.")
    submitted_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(acceptance__gte=1, acceptance__lte=7), name="acceptance_1_7"
            ),
            models.CheckConstraint(
                condition=models.Q(action__gte=1, action__lte=7), name="action_1_7"
            ),
        ]

    def __str__(self) -> str:
        return f"evaluation of {self.recourse}"


class PageVisit(models.Model):
    """Paradata: when a participant first entered a page and when they submitted it."""

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="visits")
    page = models.CharField(max_length=40)
    entered_at = models.DateTimeField()
    exited_at = models.DateTimeField(null=True, blank=True)
    views = models.PositiveIntegerField(default=1)
    timeout_happened = models.BooleanField(default=False)

    class Meta:
        ordering = ["participant", "entered_at"]
        constraints = [
            models.UniqueConstraint(fields=["participant", "page"], name="visit_unique_page")
        ]

    def __str__(self) -> str:
        return f"P{self.participant_id} {self.page}"


class Withdrawal(models.Model):
    """The log of a withdrawal or a deletion on request; the answers themselves are gone."""

    class By(models.TextChoices):
        PARTICIPANT = "participant", "The participant"
        RESEARCHER = "researcher", "A researcher, on request"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="withdrawals")
    participant_number = models.PositiveIntegerField(help_text="The participant's former id.")
    by = models.CharField(max_length=12, choices=By.choices)
    by_user = user_link(None)
    page = models.CharField(max_length=40, blank=True, default="")
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-at"]

    def __str__(self) -> str:
        return f"{self.study.slug}: P{self.participant_number} withdrawn by {self.by}"


class FittedMethod(models.Model):
    """A model fitted on a study's pool: a pool strategy's (EBR density, IBR encoder) or a
    generating recourse method's (`method:<name>`, fitted against the decision model).

    Fitted by a Celery task when the study goes live; the worker loads the stored fit
    instead of fitting again (keyed by the pool's hash, the engine's fit format and, for
    methods, the decision model, so a new pool, model or storage format is fitted anew).
    """

    class State(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Fitting"
        DONE = "done", "Ready"
        FAILED = "failed", "Failed"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="fitted_methods")
    strategy = models.CharField(
        max_length=40, help_text="A pool strategy's fit (ebr), or a method's (method:wachter)."
    )
    pool_hash = models.CharField(max_length=64)
    model_key = models.CharField(
        max_length=80,
        blank=True,
        default="",
        help_text="The decision model a method was fitted against (empty: pool fits).",
    )
    fit_format = models.CharField(
        max_length=40, blank=True, default="", help_text="The engine's format of the stored fit."
    )
    state = models.CharField(max_length=10, choices=State.choices, default=State.QUEUED)
    progress = models.FloatField(default=0.0, help_text="0..1")
    message = models.CharField(max_length=500, blank=True, default="")
    blob = models.BinaryField(null=True, blank=True, editable=False)
    seconds = models.FloatField(null=True, blank=True)
    queued_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["study", "strategy"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "strategy", "pool_hash", "fit_format", "model_key"],
                name="fitted_method_unique_fit",
            )
        ]

    def __str__(self) -> str:
        return f"{self.study.slug} {self.strategy} ({self.state}, {self.progress:.0%})"


# a model of its own module, imported here so that `studyapp.models.DesignCheck` exists
from studyapp.design_check_models import DesignCheck  # noqa: E402, F401
from studyapp.integrity_models import IntegrityRecord  # noqa: E402, F401
from studyapp.panel_models import PanelAction, PanelConnection  # noqa: E402, F401
from studyapp.retention_models import DeletionReceipt, ExportRecord  # noqa: E402, F401
from studyapp.version_models import StudyRegistration, StudyVersion  # noqa: E402, F401
from studyapp.wave_models import Wave, WaveChange, WaveModel  # noqa: E402, F401
